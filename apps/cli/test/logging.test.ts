import { LogLevel } from "effect"
import { describe, expect, it } from "vitest"
import { levelName } from "../src/Logging.ts"

describe("log levels", () => {
  it("are written in LOG_LEVEL's (the README's) words: warning, not warn", () => {
    expect(
      [LogLevel.Trace, LogLevel.Debug, LogLevel.Info, LogLevel.Warning, LogLevel.Error, LogLevel.Fatal].map(
        levelName,
      ),
    ).toEqual(["trace", "debug", "info", "warning", "error", "fatal"])
  })
})
