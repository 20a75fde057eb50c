/**
 * Log lines from Promise code (the pipeline's task handlers, housekeeping) into the process's logger.
 * Effect code logs with `Effect.log…`; Promise code runs outside any fiber, so the worker runs each handler
 * with the process's logger as its sink (`withLogSink`) and every promise the handler starts finds it
 * (AsyncLocalStorage). Without a sink (tests calling a handler directly) lines are dropped.
 */
import { AsyncLocalStorage } from "node:async_hooks"

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
