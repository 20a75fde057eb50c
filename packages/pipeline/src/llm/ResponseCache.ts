/**
 * A cache of language-model answers by request hash (DESIGN §3): an identical request (same model, messages,
 * output schema and temperature) is answered from the cache without a call. Only well-formed answers are
 * stored. The in-memory cache serves tests and single-process tools; production uses the `llm_cache` table.
 */
import { createHash } from "node:crypto"
import type { Conn } from "@dxs/db"
import * as LlmCache from "@dxs/db/repositories/LlmCache"
import { Effect } from "effect"
import { groupBatch } from "./GroupBatch.ts"

export interface CachedResponse {
  /** The parsed JSON content of the model's answer. */
  readonly content: unknown
  readonly promptTokens: number
  readonly completionTokens: number
  /** The model that produced the answer (recorded for inspection; the key already covers it). */
  readonly model?: string
}

/** A store's failure is a defect: the model then answers without the cache (see `OpenAi.ts`). */
export interface ResponseCache {
  readonly get: (key: string) => Effect.Effect<CachedResponse | undefined>
  readonly put: (key: string, value: CachedResponse) => Effect.Effect<void>
}

/** What a cache key covers: everything that decides the model's answer. */
export interface CacheKeyInput {
  readonly model: string
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }>
  readonly schemaName: string
  readonly schema: unknown
  readonly temperature: number
}

/** SHA-256 (hex) of the JSON of `{model, messages, response_format: {name, schema}, temperature}`. */
export const cacheKey = (input: CacheKeyInput): string =>
  createHash("sha256")
    .update(
      JSON.stringify({
        model: input.model,
        messages: input.messages.map((m) => ({ role: m.role, content: m.content })),
        response_format: { name: input.schemaName, schema: input.schema },
        temperature: input.temperature,
      }),
    )
    .digest("hex")

/** A process-local cache (unbounded unless `maxEntries` is given; the oldest entries go first). */
export const memoryResponseCache = (maxEntries = Number.POSITIVE_INFINITY): ResponseCache => {
  const entries = new Map<string, CachedResponse>()
  return {
    get: (key) => Effect.sync(() => entries.get(key)),
    put: (key, value) =>
      Effect.sync(() => {
        if (entries.has(key)) return
        entries.set(key, value)
        while (entries.size > maxEntries) {
          const oldest = entries.keys().next()
          if (oldest.done) break
          entries.delete(oldest.value)
        }
      }),
  }
}

/**
 * The `llm_cache` table: the first answer stored for a key wins (concurrent writers do not conflict). The
 * reads and the writes of a process go in batches (`groupBatch`): the tasks of a worker whose answers come
 * back together look up and store theirs in a few statements, not in two each.
 */
export const postgresResponseCache = (db: Conn): ResponseCache => {
  const get = groupBatch((keys: ReadonlyArray<string>) =>
    Effect.map(LlmCache.findCachedAnswers(db, keys), (found) =>
      keys.map((key): CachedResponse | undefined => {
        const row = found.get(key)
        return row === undefined
          ? undefined
          : {
              content: row.response,
              promptTokens: row.prompt_tokens,
              completionTokens: row.completion_tokens,
              model: row.model,
            }
      }),
    ),
  )
  const put = groupBatch((entries: ReadonlyArray<readonly [string, CachedResponse]>) =>
    Effect.as(
      LlmCache.insertCachedAnswers(
        db,
        entries.map(([key, value]) => ({
          key,
          model: value.model ?? "",
          response: JSON.stringify(value.content),
          promptTokens: value.promptTokens,
          completionTokens: value.completionTokens,
        })),
      ),
      entries.map(() => undefined),
    ),
  )
  return { get, put: (key, value) => put([key, value]) }
}
