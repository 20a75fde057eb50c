import { Cause, HashMap, Layer, Logger, LogLevel } from "effect"
import type { LogFormat, LogLevelName } from "./Config.ts"

const levels: Record<LogLevelName, LogLevel.LogLevel> = {
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None,
}

/**
 * A line's level in the README's (and LOG_LEVEL's) words: `warning`, not Effect's `WARN`; one vocabulary
 * for what is configured and what is written.
 */
export const levelName = (level: LogLevel.LogLevel): string =>
  (Object.entries(levels).find(([, l]) => l._tag === level._tag)?.[0] as LogLevelName | undefined) ??
  level.label.toLowerCase()

const text = (message: unknown): string =>
  (Array.isArray(message) ? message : [message])
    .map((m) => (typeof m === "string" ? m : m instanceof Error ? m.message : JSON.stringify(m)))
    .join(" ")

/** `key=value`, quoted when the value has spaces or quotes (pretty lines stay one line per entry). */
const pair = (key: string, value: unknown) => {
  const shown = typeof value === "string" ? value : JSON.stringify(value)
  return `${key}=${/[\s"=]/.test(shown ?? "") ? JSON.stringify(shown) : shown}`
}

/**
 * For people at a terminal: time, level, message and the annotations as `key=value`, then the cause.
 * On stderr (stdout is kept for what a command prints: keys, tables).
 */
const prettyLogger = Logger.make(({ logLevel, message, cause, date, annotations }) => {
  const fields = HashMap.toEntries(annotations).map(([k, v]) => pair(k, v))
  const detail = Cause.isEmpty(cause) ? "" : `\n${Cause.pretty(cause)}`
  process.stderr.write(
    `${date.toISOString()} ${levelName(logLevel).padEnd(7)} ${text(message)}${fields.length > 0 ? ` ${fields.join(" ")}` : ""}${detail}\n`,
  )
})

/** For log collectors: one JSON object per line (time, level, message, the annotations, the error). */
const jsonLogger = Logger.make(({ logLevel, message, cause, date, annotations }) => {
  const line: Record<string, unknown> = {
    time: date.toISOString(),
    level: levelName(logLevel),
    message: text(message),
  }
  for (const [key, value] of HashMap.toEntries(annotations)) if (!(key in line)) line[key] = value
  if (!Cause.isEmpty(cause)) line.error = Cause.pretty(cause)
  process.stderr.write(`${JSON.stringify(line)}\n`)
})

export const loggingLayer = (level: LogLevelName, format: LogFormat) =>
  Layer.mergeAll(
    Logger.replace(Logger.defaultLogger, format === "json" ? jsonLogger : prettyLogger),
    Logger.minimumLogLevel(levels[level]),
  )
