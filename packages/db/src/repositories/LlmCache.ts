/**
 * The `llm_cache` table: language-model answers by request hash. A module of its own: the cache is shared
 * by every organisation (an identical request gets the identical answer) and belongs to no aggregate.
 */
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../Db.ts"

export interface CachedAnswerRow {
  readonly response: unknown
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly model: string
}

/** The answers stored for these keys, by key (a key without one is absent). */
export const findCachedAnswers = (
  db: Conn,
  keys: ReadonlyArray<string>,
): Effect.Effect<ReadonlyMap<string, CachedAnswerRow>> =>
  keys.length === 0
    ? Effect.succeed(new Map())
    : Effect.promise(() =>
        db
          .selectFrom("llm_cache")
          .select(["key", "response", "prompt_tokens", "completion_tokens", "model"])
          .where("key", "=", sql<string>`any(${sql.val([...new Set(keys)])}::text[])`)
          .execute(),
      ).pipe(Effect.map((rows) => new Map(rows.map(({ key, ...answer }) => [key, answer]))))

export interface NewCachedAnswer {
  readonly key: string
  readonly model: string
  /** JSON text. */
  readonly response: string
  readonly promptTokens: number
  readonly completionTokens: number
}

/**
 * Stores answers in one statement; the first one stored for a key wins (concurrent writers do not conflict,
 * and of two for one key here the first is kept).
 */
export const insertCachedAnswers = (
  db: Conn,
  answers: ReadonlyArray<NewCachedAnswer>,
): Effect.Effect<void> => {
  const firsts = [...new Map([...answers].reverse().map((a) => [a.key, a])).values()]
  return firsts.length === 0
    ? Effect.void
    : Effect.promise(() =>
        db
          .insertInto("llm_cache")
          .values(
            firsts.map((a) => ({
              key: a.key,
              model: a.model,
              response: a.response,
              prompt_tokens: a.promptTokens,
              completion_tokens: a.completionTokens,
            })),
          )
          .onConflict((oc) => oc.column("key").doNothing())
          .execute(),
      ).pipe(Effect.asVoid)
}
