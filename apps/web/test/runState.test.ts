import type { RunRecord } from "@dxs/domain/contract/Run"
import type { AgentProgress, AgentStatus } from "@dxs/domain/Records"
import { describe, expect, it } from "vitest"
import { toAgentStatus } from "../src/live.ts"
import { isActive, launchMark, runAfter, runProgressOf } from "../src/runState.ts"

const run = (number: number, status: RunRecord["status"], pairs = 0): RunRecord => ({
  id: `00000000-0000-4000-8000-${String(number).padStart(12, "0")}`,
  number,
  status,
  failure_reason: status === "failed" ? "the model server refused" : null,
  created_at: "2026-01-01T00:00:00Z",
  started_at: status === "queued" ? null : "2026-01-01T00:00:01Z",
  finished_at: status === "succeeded" || status === "failed" ? "2026-01-01T00:00:02Z" : null,
  extraction_pairs: pairs,
  agents: [],
  usage: { requests: 0, cache_hits: 0, input_tokens: 0, cached_input_tokens: 0, output_tokens: 0 },
})

const stage = (completed: number, total: number) => ({
  completed,
  total,
  percentage: total === 0 ? 0 : Math.round((completed / total) * 100),
})
const progress = (completed: number, total: number): AgentProgress => ({
  parsing: stage(0, 0),
  extraction: stage(completed, total),
  web_search: stage(0, 0),
  resolution: stage(0, 0),
  is_running: completed < total,
  is_pending: false,
})
const status = (completed: number, total: number): AgentStatus => ({
  progress: { a: progress(completed, total) },
  consistency: {},
  pipeline_running: true,
})

describe("the run a launch follows", () => {
  it("is above every run that started: a new queued run, or the queued one it joins", () => {
    expect(launchMark([])).toBe(0)
    expect(launchMark([run(2, "succeeded"), run(1, "succeeded")])).toBe(2)
    // a run is running and another is queued: the launch joins the queued one (3)
    const runs = [run(3, "queued"), run(2, "running"), run(1, "succeeded")]
    expect(launchMark(runs)).toBe(2)
    expect(runAfter(runs, launchMark(runs))?.number).toBe(3)
    // before the history lists the new run, nothing is followed yet
    expect(runAfter([run(2, "succeeded")], 2)).toBeUndefined()
    expect(isActive(undefined)).toBe(true)
    expect(isActive(run(1, "failed"))).toBe(false)
  })
})

describe("runProgressOf", () => {
  it("after a relaunch shows no number of the previous run until the new one runs", () => {
    // the status still counts the previous run's 78 of 78 while the new run waits
    const stale = status(78, 78)
    const waiting = runProgressOf({ phase: "tracking", run: undefined, finished: false }, stale)
    expect(waiting).toEqual({ percentage: null, text: "Waiting for the run…", state: "Running…" })
    const queued = runProgressOf({ phase: "tracking", run: run(2, "queued"), finished: false }, stale)
    expect(queued).toEqual({ percentage: null, text: "Run 2 is queued", state: "Running…" })
    expect(runProgressOf({ phase: "launching" }, stale).text).not.toContain("78")
  })

  it("counts the running run's extractions, then says how it ended", () => {
    const running = { phase: "tracking", run: run(2, "running"), finished: false } as const
    expect(runProgressOf(running, status(3, 12))).toEqual({
      percentage: 25,
      text: "Run 2: 3 of 12 extractions",
      state: "Running…",
    })
    expect(runProgressOf(running, undefined).percentage).toBeNull()
    expect(
      runProgressOf({ phase: "tracking", run: run(2, "succeeded", 12), finished: true }, undefined),
    ).toEqual({
      percentage: 100,
      text: "Run 2 succeeded: 12 extractions",
      state: "Done",
    })
    expect(runProgressOf({ phase: "tracking", run: run(2, "failed", 1), finished: true }, undefined)).toEqual(
      {
        percentage: 100,
        text: "Run 2 failed after 1 extraction",
        state: "Failed: the model server refused",
      },
    )
    expect(runProgressOf({ phase: "idle" }, status(1, 2))).toEqual({ percentage: null, text: "", state: "" })
  })
})

describe("toAgentStatus (a runProgress state as the REST status)", () => {
  it("keys the agents' progress and consistency by agent id", () => {
    const consistency = {
      consistent_count: 1,
      missing_count: 0,
      inconsistent_count: 0,
      ignored_count: 0,
      total_count: 1,
    }
    expect(
      toAgentStatus({
        pipeline_running: false,
        agents: [
          { agent_id: "a", progress: progress(1, 1), consistency },
          { agent_id: "b", progress: progress(0, 0), consistency: null },
        ],
      }),
    ).toEqual({
      pipeline_running: false,
      progress: { a: progress(1, 1), b: progress(0, 0) },
      consistency: { a: consistency },
    })
  })
})
