import { describe, expect, it } from "vitest"
import { DELIVERY_SCHEDULE_MS, nextAttemptDelayMs } from "../../src/webhooks/Delivery.ts"

const s = 1_000
const min = 60 * s
const h = 60 * min

describe("the webhook retry schedule", () => {
  it("is immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h: ten attempts", () => {
    expect(DELIVERY_SCHEDULE_MS).toEqual([
      0,
      5 * s,
      5 * min,
      30 * min,
      2 * h,
      5 * h,
      10 * h,
      14 * h,
      20 * h,
      24 * h,
    ])
    const middle = () => 0.5
    const delays = Array.from({ length: 10 }, (_, i) => nextAttemptDelayMs(i + 1, middle))
    expect(delays).toEqual([
      5 * s,
      5 * min,
      30 * min,
      2 * h,
      5 * h,
      10 * h,
      14 * h,
      20 * h,
      24 * h,
      undefined,
    ])
    // The last attempt comes about three days after the first.
    expect(delays.reduce((a: number, d) => a + (d ?? 0), 0)).toBe(75 * h + 35 * min + 5 * s)
  })

  it("jitters each delay by up to ±20 %", () => {
    for (let attempt = 1; attempt < 10; attempt++) {
      const base = DELIVERY_SCHEDULE_MS[attempt]!
      expect(nextAttemptDelayMs(attempt, () => 0)).toBe(Math.round(base * 0.8))
      expect(nextAttemptDelayMs(attempt, () => 0.999999)).toBeCloseTo(base * 1.2, -2)
      for (let i = 0; i < 50; i++) {
        const d = nextAttemptDelayMs(attempt)!
        expect(d).toBeGreaterThanOrEqual(Math.floor(base * 0.8))
        expect(d).toBeLessThanOrEqual(Math.ceil(base * 1.2))
      }
    }
  })

  it("none remain after the last attempt of a shorter schedule", () => {
    const schedule = [0, 50, 50]
    expect(nextAttemptDelayMs(1, () => 0.5, schedule)).toBe(50)
    expect(nextAttemptDelayMs(2, () => 0.5, schedule)).toBe(50)
    expect(nextAttemptDelayMs(3, () => 0.5, schedule)).toBeUndefined()
  })
})
