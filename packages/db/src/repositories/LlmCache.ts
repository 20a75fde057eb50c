/**
 * The `llm_cache` table: language-model answers by request hash. A module of its own: the cache is shared
 * by every organisation (an identical request gets the identical answer) and belongs to no aggregate.
 */
import { Effect } from "effect"
import type { Conn } from "../Db.ts"

export interface CachedAnswerRow {
  readonly response: unknown
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly model: string
}

export const findCachedAnswer = (db: Conn, key: string): Effect.Effect<CachedAnswerRow | undefined> =>
  Effect.promise(() =>
    db
      .selectFrom("llm_cache")
      .select(["response", "prompt_tokens", "completion_tokens", "model"])
      .where("key", "=", key)
      .executeTakeFirst(),
  )

/** Stores an answer; the first one stored for a key wins (concurrent writers do not conflict). */
export const insertCachedAnswer = (
  db: Conn,
  key: string,
  answer: {
    readonly model: string
    /** JSON text. */
    readonly response: string
    readonly promptTokens: number
    readonly completionTokens: number
  },
): Effect.Effect<void> =>
  Effect.promise(() =>
    db
      .insertInto("llm_cache")
      .values({
        key,
        model: answer.model,
        response: answer.response,
        prompt_tokens: answer.promptTokens,
        completion_tokens: answer.completionTokens,
      })
      .onConflict((oc) => oc.column("key").doNothing())
      .execute(),
  ).pipe(Effect.asVoid)
