import { Cause, Layer, Logger, LogLevel } from "effect"
import type { LogLevelName } from "./Config.ts"

const levels: Record<LogLevelName, LogLevel.LogLevel> = {
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None,
}

const text = (message: unknown): string =>
  (Array.isArray(message) ? message : [message])
    .map((m) => (typeof m === "string" ? m : m instanceof Error ? m.message : JSON.stringify(m)))
    .join(" ")

/** One line per entry on stderr (stdout is kept for what a command prints: keys, tables). */
const stderrLogger = Logger.make(({ logLevel, message, cause, date }) => {
  const detail = Cause.isEmpty(cause) ? "" : `\n${Cause.pretty(cause)}`
  process.stderr.write(`${date.toISOString()} ${logLevel.label.padEnd(5)} ${text(message)}${detail}\n`)
})

export const loggingLayer = (level: LogLevelName) =>
  Layer.mergeAll(Logger.replace(Logger.defaultLogger, stderrLogger), Logger.minimumLogLevel(levels[level]))
