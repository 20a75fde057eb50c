/**
 * Which run the project screen follows and what its progress bar says: pure rules over the run history
 * (`GET …/runs/`, newest first) and the agents' progress (REST status or the `runProgress` subscription).
 * Progress belongs to a run: after a launch only the run that launch queued (or joined) is shown, so the
 * numbers of an earlier run never appear under a new launch.
 */
import type { RunRecord } from "@dxs/domain/contract/Run"
import type { AgentStatus } from "@dxs/domain/Records"

/** Queued or running; a run not listed yet counts as active (it was just launched). */
export const isActive = (run: RunRecord | undefined): boolean =>
  run === undefined || run.status === "queued" || run.status === "running"

/** The newest run numbered above `mark` (the runs come newest first). */
export const runAfter = (runs: ReadonlyArray<RunRecord> | undefined, mark: number): RunRecord | undefined =>
  runs?.find((r) => r.number > mark)

/**
 * The mark of a launch: the highest number of the runs that started. A launch queues a run above it, or
 * joins the queued one, which is above it too.
 */
export const launchMark = (runs: ReadonlyArray<RunRecord>): number =>
  Math.max(0, ...runs.filter((r) => r.status !== "queued").map((r) => r.number))

export type RunView =
  | { readonly phase: "idle" }
  | { readonly phase: "launching" }
  /** Launched (or found running): `run` once the history lists it. */
  | { readonly phase: "tracking"; readonly run: RunRecord | undefined; readonly finished: boolean }

export interface RunProgress {
  /** The bar's value, 0 to 100; null: indeterminate. */
  readonly percentage: number | null
  /** The words beside the bar. */
  readonly text: string
  /** The run's state in a word or two (a live region): "Running…", "Done", "Failed: …". */
  readonly state: string
}

const extractions = (n: number): string => `${n} ${n === 1 ? "extraction" : "extractions"}`

/** The progress bar of the followed run; `status` is only read while that run runs. */
export const runProgressOf = (view: RunView, status: AgentStatus | undefined): RunProgress => {
  if (view.phase === "idle") return { percentage: null, text: "", state: "" }
  if (view.phase === "launching") return { percentage: null, text: "Launching…", state: "Running…" }
  const { run } = view
  if (run === undefined) return { percentage: null, text: "Waiting for the run…", state: "Running…" }
  if (run.status === "queued")
    return { percentage: null, text: `Run ${run.number} is queued`, state: "Running…" }
  if (run.status === "running") {
    let total = 0
    let completed = 0
    for (const p of Object.values(status?.progress ?? {})) {
      total += p.extraction.total
      completed += p.extraction.completed
    }
    if (total === 0) return { percentage: null, text: `Run ${run.number} is starting`, state: "Running…" }
    return {
      percentage: Math.min(100, Math.round((completed / total) * 100)),
      text: `Run ${run.number}: ${completed} of ${total} extractions`,
      state: "Running…",
    }
  }
  if (run.status === "failed")
    return {
      percentage: 100,
      text: `Run ${run.number} failed after ${extractions(run.extraction_pairs)}`,
      state: `Failed${run.failure_reason ? `: ${run.failure_reason}` : ""}`,
    }
  return {
    percentage: 100,
    text: `Run ${run.number} succeeded: ${extractions(run.extraction_pairs)}`,
    state: "Done",
  }
}
