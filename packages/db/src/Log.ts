/**
 * Log lines of the pipeline's task handlers (and housekeeping) into the process's logger. The worker runs
 * each handler with the process's logger as its sink (`withLogSink`) and every promise the handler starts
 * finds it (AsyncLocalStorage). Effect code started by a handler carries the sink in its fiber instead
 * (`inLogContext`, `logLine`): Effect's scheduler promises no async context to a resumed fiber. Without a
 * sink (tests calling a handler directly, the run watch) lines are dropped.
 */
import { AsyncLocalStorage } from "node:async_hooks"
import { Effect, FiberRef } from "effect"

export type LogLevel = "debug" | "info" | "warning" | "error"

/** Structured fields of a line: ids, counts, durations, outcomes — never secrets or document text. */
export type LogFields = Readonly<Record<string, string | number | boolean | null | undefined>>

export type LogSink = (level: LogLevel, message: string, fields: LogFields) => void

const sinks = new AsyncLocalStorage<LogSink>()

/** Runs `f` with its log lines (and those of every promise it starts) going to `sink`. */
export const withLogSink = <A>(sink: LogSink, f: () => A): A => sinks.run(sink, f)

/** A line of the process's log. */
export const logEvent = (level: LogLevel, message: string, fields: LogFields = {}): void => {
  sinks.getStore()?.(level, message, fields)
}

const fiberSink = FiberRef.unsafeMake<LogSink | undefined>(undefined)

/**
 * `effect` with the log sink of the current async context (if any) as its fiber's: build it where a
 * handler turns Effect code into its promise, synchronously, so the sink is the handler's.
 */
export const inLogContext = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  const sink = sinks.getStore()
  return sink === undefined ? effect : Effect.locally(effect, fiberSink, sink)
}

/** The log sink the current fiber carries (see `inLogContext`), for promise code it starts. */
export const currentLogSink: Effect.Effect<LogSink | undefined> = FiberRef.get(fiberSink)

/** `logEvent` for Effect code: the line goes to the sink its fiber carries (see `inLogContext`). */
export const logLine = (level: LogLevel, message: string, fields: LogFields = {}): Effect.Effect<void> =>
  Effect.flatMap(FiberRef.get(fiberSink), (sink) => Effect.sync(() => sink?.(level, message, fields)))
