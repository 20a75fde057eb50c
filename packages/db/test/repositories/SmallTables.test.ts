import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { makeKysely } from "../../src/Db.ts"
import * as LlmCache from "../../src/repositories/LlmCache.ts"
import * as RateCounters from "../../src/repositories/RateCounters.ts"
import * as ServerSecrets from "../../src/repositories/ServerSecrets.ts"

const url = await useTestDatabase()
const db = makeKysely(url, 4)
afterAll(() => db.destroy())

const run = Effect.runPromise

describe("rate counters", () => {
  it("count per subject within the minute, with the seconds left in it", async () => {
    const [a1, a2, b1] = [
      await run(RateCounters.countInMinute(db, "key:a")),
      await run(RateCounters.countInMinute(db, "key:a")),
      await run(RateCounters.countInMinute(db, "key:b")),
    ]
    // A minute boundary between the calls restarts the count.
    expect([1, 2]).toContain(a2.count)
    expect(a1.count).toBe(1)
    expect(b1.count).toBe(1)
    expect(a1.retry_after).toBeLessThanOrEqual(60)
  })

  it("of past minutes are swept", async () => {
    await db
      .insertInto("rate_counters")
      .values({ subject: "old", window_start: new Date(Date.now() - 10 * 60_000), count: 3 })
      .execute()
    expect(await run(RateCounters.deletePastCounters(db))).toBe(1)
  })
})

describe("server secrets", () => {
  it("keep the first value stored, and are replaced only from the expected value", async () => {
    await run(ServerSecrets.insertSecretIfMissing(db, "s", "first"))
    await run(ServerSecrets.insertSecretIfMissing(db, "s", "second"))
    expect(await run(ServerSecrets.findSecret(db, "s"))).toBe("first")
    await run(ServerSecrets.replaceSecret(db, "s", "other", "nope"))
    expect(await run(ServerSecrets.findSecret(db, "s"))).toBe("first")
    await run(ServerSecrets.replaceSecret(db, "s", "first", "third"))
    expect(await run(ServerSecrets.findSecret(db, "s"))).toBe("third")
    expect(await run(ServerSecrets.findSecret(db, "missing"))).toBeUndefined()
  })
})

describe("the model-answer cache", () => {
  it("keeps the first answer stored for a key", async () => {
    const answer = (text: string) => ({
      model: "m",
      response: JSON.stringify({ text }),
      promptTokens: 3,
      completionTokens: 4,
    })
    expect(await run(LlmCache.findCachedAnswer(db, "k"))).toBeUndefined()
    await run(LlmCache.insertCachedAnswer(db, "k", answer("one")))
    await run(LlmCache.insertCachedAnswer(db, "k", answer("two")))
    expect(await run(LlmCache.findCachedAnswer(db, "k"))).toEqual({
      response: { text: "one" },
      prompt_tokens: 3,
      completion_tokens: 4,
      model: "m",
    })
  })
})
