/**
 * A clock for servers under test: its time stands still until the test moves it, so a rate window, a
 * lease or an expiry is reached by moving the clock, never by waiting. Give it to a server as its Effect
 * `Clock` (the services' `clock` option, `Layer.setClock`); only what reads the time through Effect sees
 * it. Sleeping still takes real time: timeouts and periodic work keep running as they would.
 */
import { Clock, type Duration, Effect } from "effect"

export interface MovableClock {
  /** The Effect clock a server is given. */
  readonly clock: Clock.Clock
  /** The clock's time, in milliseconds since the epoch. */
  readonly now: () => number
  /** Moves the clock by `ms` milliseconds (forwards or back). */
  readonly adjust: (ms: number) => void
  /** Moves the clock to the start of the next minute: a per-minute window starts afresh. */
  readonly toNextMinute: () => void
}

/** A clock that reads `startMs` (default: the system's time now) until it is moved. */
export const movableClock = (startMs: number = Date.now()): MovableClock => {
  let nowMs = startMs
  const system = Clock.make()
  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => nowMs,
    currentTimeMillis: Effect.sync(() => nowMs),
    unsafeCurrentTimeNanos: () => BigInt(nowMs) * 1_000_000n,
    currentTimeNanos: Effect.sync(() => BigInt(nowMs) * 1_000_000n),
    sleep: (duration: Duration.Duration) => system.sleep(duration),
  }
  return {
    clock,
    now: () => nowMs,
    adjust: (ms) => {
      nowMs += ms
    },
    toNextMinute: () => {
      nowMs = (Math.floor(nowMs / 60_000) + 1) * 60_000
    },
  }
}
