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
  it("count per subject within a window", async () => {
    const minute = new Date("2026-03-01T10:07:00Z")
    const next = new Date("2026-03-01T10:08:00Z")
    expect([
      await run(RateCounters.countInWindow(db, "key:a", minute)),
      await run(RateCounters.countInWindow(db, "key:a", minute)),
      await run(RateCounters.countInWindow(db, "key:b", minute)),
      await run(RateCounters.countInWindow(db, "key:a", next)),
      await run(RateCounters.countInWindow(db, "key:a", minute)),
    ]).toEqual([1, 2, 1, 1, 3])
  })

  it("of windows before the given time are swept", async () => {
    await db
      .insertInto("rate_counters")
      .values([
        { subject: "old", window_start: new Date("2026-03-01T09:50:00Z"), count: 3 },
        { subject: "recent", window_start: new Date("2026-03-01T09:58:00Z"), count: 3 },
      ])
      .execute()
    expect(await run(RateCounters.deletePastCounters(db, new Date("2026-03-01T09:58:00Z")))).toBe(1)
    const left = await db
      .selectFrom("rate_counters")
      .select("subject")
      .where("subject", "in", ["old", "recent"])
      .execute()
    expect(left).toEqual([{ subject: "recent" }])
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
      key: "k",
      model: "m",
      response: JSON.stringify({ text }),
      promptTokens: 3,
      completionTokens: 4,
    })
    expect(await run(LlmCache.findCachedAnswers(db, ["k"]))).toEqual(new Map())
    await run(LlmCache.insertCachedAnswers(db, [answer("one")]))
    await run(LlmCache.insertCachedAnswers(db, [answer("two")]))
    expect((await run(LlmCache.findCachedAnswers(db, ["k"]))).get("k")).toEqual({
      response: { text: "one" },
      prompt_tokens: 3,
      completion_tokens: 4,
      model: "m",
    })
  })

  it("reads and stores several answers in one statement each, the first for a key kept", async () => {
    const answer = (key: string, text: string) => ({
      key,
      model: "m",
      response: JSON.stringify({ text }),
      promptTokens: 1,
      completionTokens: 2,
    })
    await run(
      LlmCache.insertCachedAnswers(db, [answer("a", "first"), answer("b", "b"), answer("a", "second")]),
    )
    await run(LlmCache.insertCachedAnswers(db, [answer("b", "again"), answer("c", "c")]))
    const found = await run(LlmCache.findCachedAnswers(db, ["a", "b", "c", "missing", "a"]))
    expect([...found.keys()].sort()).toEqual(["a", "b", "c"])
    expect([...found.values()].map((r) => r.response)).toEqual(
      expect.arrayContaining([{ text: "first" }, { text: "b" }, { text: "c" }]),
    )
    expect(found.get("a")!.response).toEqual({ text: "first" })
    expect(found.get("b")!.response).toEqual({ text: "b" })
  })
})
