import type { TaskRow } from "@dxs/db"
import { logEvent, logLine, withLogSink } from "@dxs/db/Log"
import type { TaskDb } from "@dxs/db/TaskQueue"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { ModelError } from "../../src/llm/LanguageModel.ts"
import { promiseCode, type StageShape, stageHandler } from "../../src/run/stages/Stage.ts"

const task = { id: "t1", kind: "extract", payload: {} } as unknown as TaskRow
const context = () => ({
  workerId: "w1",
  db: undefined as unknown as TaskDb,
  complete: async () => undefined,
  signal: new AbortController().signal,
})

describe("a stage run by the worker", () => {
  it("fails with its tagged error itself, so the task's record keeps its message", async () => {
    const failure = new ModelError({ message: "rate limited", retryable: true })
    const stage: StageShape = { run: () => Effect.fail(failure) }
    expect(await Effect.runPromise(Effect.flip(stageHandler(stage)(task, context())))).toBe(failure)
  })

  it("fails with a defect itself (the worker recognises its lost lease by its class)", async () => {
    const defect = new Error("lease lost")
    const stage: StageShape = { run: () => Effect.die(defect) }
    const died = stageHandler(stage)(task, context()).pipe(
      Effect.as<unknown>(undefined),
      Effect.catchAllDefect((d) => Effect.succeed(d)),
    )
    expect(await Effect.runPromise(died)).toBe(defect)
  })

  it("runs the pipeline's Promise code in its own task's log context, beside other tasks", async () => {
    // Every task waits on the same promise, so their fibers all resume from one callback.
    let open: () => void = () => undefined
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    const stage: StageShape = {
      run: (t, ctx) =>
        Effect.gen(function* () {
          yield* Effect.promise(() => gate)
          for (let i = 0; i < 3; i++) {
            yield* promiseCode(ctx, async () => logEvent("info", `line ${i}`, { task: t.id }))
            yield* Effect.sleep(1)
          }
        }),
    }
    const lines = new Map<string, Array<unknown>>()
    const run = (id: string) => {
      const seen: Array<unknown> = []
      lines.set(id, seen)
      return withLogSink(
        (_level, _message, fields) => seen.push(fields.task),
        () => Effect.runPromise(stageHandler(stage)({ ...task, id } as TaskRow, context())),
      )
    }
    const running = Promise.all(["a", "b", "c"].map(run))
    open()
    await running
    for (const [id, seen] of lines) expect(seen).toEqual(Array(3).fill(id))
  })

  it("sends the log lines of its Effect code to its own task's sink, beside other tasks", async () => {
    let open: () => void = () => undefined
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    const stage: StageShape = {
      run: (t) =>
        Effect.gen(function* () {
          yield* Effect.promise(() => gate)
          for (let i = 0; i < 3; i++) {
            yield* logLine("info", `line ${i}`, { task: t.id })
            yield* Effect.sleep(1)
          }
        }),
    }
    const lines = new Map<string, Array<unknown>>()
    const run = (id: string) => {
      const seen: Array<unknown> = []
      lines.set(id, seen)
      return withLogSink(
        (_level, _message, fields) => seen.push(fields.task),
        () => Effect.runPromise(stageHandler(stage)({ ...task, id } as TaskRow, context())),
      )
    }
    const running = Promise.all(["a", "b", "c"].map(run))
    open()
    await running
    for (const [id, seen] of lines) expect(seen).toEqual(Array(3).fill(id))
  })
})
