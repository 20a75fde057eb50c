/**
 * The project's runs: launching, the launched run's live progress (the GraphQL `runProgress` subscription,
 * falling back to polling the REST status when the stream ends or fails) and the run history
 * (`GET …/runs/`). Progress belongs to a run: a launch forgets what was shown before, and the numbers
 * shown are those of the run the launch queued, once it runs.
 */
import type { RunRecord, RunsPage } from "@dxs/domain/contract/Run"
import type { Agent, AgentStatus } from "@dxs/domain/Records"
import { useMutation, useQuery } from "@tanstack/react-query"
import { useEffect, useRef, useState } from "react"
import { api, errorMessage } from "../api.ts"
import { ErrorAlert, formatDate, Loading, pluralize, VisuallyHidden } from "../components.tsx"
import { subscribeRunProgress } from "../live.ts"
import { apiQuery, invalidateApi, queryClient } from "../query.ts"
import { Link } from "../router.tsx"
import { isActive, launchMark, type RunView, runAfter } from "../runState.ts"

const RUNS_SHOWN = 10
const POLL_MS = 1000

export interface RunTracker {
  readonly view: RunView
  /** The agents' progress to show: the tracked run's while it runs, else the last status read. */
  readonly status: AgentStatus | undefined
  /** Whether the progress comes live (true) or from polling (false). */
  readonly live: boolean
  readonly runs: ReadonlyArray<RunRecord> | undefined
  readonly runCount: number
  readonly runsError: unknown
  /** Launch; resolves with the refusal or failure (undefined once launched). */
  readonly launch: () => Promise<unknown>
}

/**
 * Launch and follow the project's runs. `onEnded` is called once when a followed run finishes (after
 * the project's queries were marked stale).
 */
export function useRunTracker(base: string, projectId: string, onEnded: () => void): RunTracker {
  const runsPath = `${base}/runs/?limit=${RUNS_SHOWN}`
  const statusPath = `${base}/agents/status/`
  // runs numbered above the mark are the launch's (or the one found running); null: nothing followed
  const [mark, setMark] = useState<number | null>(null)
  const [liveState, setLiveState] = useState<AgentStatus | undefined>(undefined)
  const [streamEnded, setStreamEnded] = useState(false)
  const ended = useRef(onEnded)
  ended.current = onEnded
  const endedRun = useRef<string | null>(null)

  const runsQuery = useQuery({
    ...apiQuery<RunsPage>(runsPath),
    refetchOnMount: "always",
    refetchInterval: (q) => {
      if (mark === null) return false
      const run = runAfter(q.state.data?.results, mark)
      return isActive(run) && streamEnded ? POLL_MS : false
    },
  })
  const runs = runsQuery.data?.results
  const tracked = mark === null ? undefined : runAfter(runs, mark)
  const following = mark !== null && isActive(tracked)

  const statusQuery = useQuery({
    ...apiQuery<AgentStatus>(statusPath),
    refetchOnMount: "always",
    refetchInterval: following && streamEnded ? POLL_MS : false,
  })

  // a run may already be going when the page opens: follow it
  const adopted = useRef(false)
  useEffect(() => {
    if (adopted.current || runs === undefined) return
    adopted.current = true
    const newest = runs[0]
    if (newest && isActive(newest)) setMark((m) => (m === null ? newest.number - 1 : m))
  }, [runs])

  const trackedRunning = tracked?.status === "running"
  const trackedRunningRef = useRef(trackedRunning)
  trackedRunningRef.current = trackedRunning

  // live progress while a run is followed
  useEffect(() => {
    if (!following || streamEnded) return
    // `anew`: a read of the history already under way may have begun before the change it is read for (a
    // run that ended while it was read), and no later event comes to read it again: it is dropped and the
    // history read again. Otherwise the read under way serves (while a run is queued, events come often).
    const refreshRuns = (anew: boolean) =>
      void queryClient.refetchQueries({ queryKey: ["api", runsPath] }, { cancelRefetch: anew })
    return subscribeRunProgress(
      projectId,
      (state) => {
        setLiveState(state)
        // the run's state (queued, running, finished) is in the history: read it when it may have moved
        if (!trackedRunningRef.current || !state.pipeline_running) refreshRuns(!state.pipeline_running)
      },
      () => {
        setStreamEnded(true)
        refreshRuns(true)
      },
    )
  }, [following, streamEnded, projectId, runsPath])

  // the followed run finished: everything it touched is read again, once
  useEffect(() => {
    if (mark === null || tracked === undefined || isActive(tracked) || endedRun.current === tracked.id) return
    endedRun.current = tracked.id
    void invalidateApi(`${base}/`)
    ended.current()
  }, [mark, tracked, base])

  const launchMutation = useMutation({
    mutationFn: async () => {
      const page = await queryClient.fetchQuery({ ...apiQuery<RunsPage>(runsPath), staleTime: 0 })
      const before = launchMark(page.results)
      await api.post(`${base}/agents/launch/`)
      return before
    },
    onMutate: () => {
      setMark(null)
      setLiveState(undefined)
      setStreamEnded(false)
    },
    onSuccess: (before) => {
      endedRun.current = null
      setMark(before)
      void invalidateApi(runsPath)
    },
  })

  const view: RunView = launchMutation.isPending
    ? { phase: "launching" }
    : mark === null
      ? { phase: "idle" }
      : { phase: "tracking", run: tracked, finished: !isActive(tracked) }

  const status = following && trackedRunning ? (streamEnded ? statusQuery.data : liveState) : statusQuery.data

  return {
    view,
    status: following && !trackedRunning ? undefined : status,
    live: !streamEnded,
    runs,
    runCount: runsQuery.data?.count ?? 0,
    runsError: runsQuery.error,
    launch: () =>
      launchMutation.mutateAsync().then(
        () => undefined,
        (e: unknown) => e,
      ),
  }
}

const RUN_STATE_LABEL: Record<RunRecord["status"], string> = {
  queued: "Queued",
  running: "Running",
  succeeded: "Succeeded",
  failed: "Failed",
}

const numberFormat = new Intl.NumberFormat("en")

/**
 * The project's runs, newest first: number, state, times, agents, pairs and model usage; each run after the
 * project's first links to what it changed.
 */
export function RunHistory({
  base,
  runs,
  count,
  error,
  agents,
}: {
  readonly base: string
  readonly runs: ReadonlyArray<RunRecord> | undefined
  readonly count: number
  readonly error: unknown
  readonly agents: ReadonlyArray<Agent> | undefined
}) {
  const names = new Map((agents ?? []).map((a) => [a.id, a.name]))
  // the project's first run has nothing before it to compare with (its number is 1 unless runs were removed)
  const firstRun = runs !== undefined && count === runs.length ? Math.min(...runs.map((r) => r.number)) : 1
  return (
    <section aria-labelledby="runs-heading" className="section">
      <h2 id="runs-heading">Runs</h2>
      {error ? <ErrorAlert message={errorMessage(error)} /> : null}
      {runs === undefined ? (
        error ? null : (
          <Loading what="runs" />
        )
      ) : runs.length === 0 ? (
        <p className="muted">No runs yet: launch to extract values from the documents.</p>
      ) : (
        <div className="table-wrap">
          <table className="data-table runs-table" data-testid="runs-table">
            <caption className="visually-hidden">Runs, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Run</th>
                <th scope="col">State</th>
                <th scope="col">Started</th>
                <th scope="col">Finished</th>
                <th scope="col">Agents</th>
                <th scope="col">Pairs</th>
                <th scope="col">Requests</th>
                <th scope="col">Tokens (in / out)</th>
                <th scope="col">
                  <VisuallyHidden>Changes</VisuallyHidden>
                </th>
              </tr>
            </thead>
            <tbody>
              {runs.map((r) => (
                <tr key={r.id} data-run-number={r.number} data-run-status={r.status}>
                  <th scope="row">{r.number}</th>
                  <td>
                    <span className={`run-state ${r.status}`}>{RUN_STATE_LABEL[r.status]}</span>
                    {r.failure_reason && <span className="muted small"> {r.failure_reason}</span>}
                  </td>
                  <td>{formatDate(r.started_at, r.status === "queued" ? "not yet" : "—")}</td>
                  <td>{formatDate(r.finished_at)}</td>
                  <td>
                    {r.agents.length === 0
                      ? "—"
                      : r.agents.length <= 3
                        ? r.agents.map((id) => names.get(id) ?? "deleted agent").join(", ")
                        : pluralize(r.agents.length, "agent")}
                  </td>
                  <td className="number">{numberFormat.format(r.extraction_pairs)}</td>
                  <td className="number">
                    {numberFormat.format(r.usage.requests)}
                    {r.usage.cache_hits > 0 && (
                      <span className="muted small">
                        {" "}
                        (+{numberFormat.format(r.usage.cache_hits)} cached)
                      </span>
                    )}
                  </td>
                  <td className="number">
                    {numberFormat.format(r.usage.input_tokens)} / {numberFormat.format(r.usage.output_tokens)}
                  </td>
                  <td>
                    {r.number > firstRun && r.status !== "queued" ? (
                      <Link href={`${base}/runs/${r.number}/changes`}>
                        What changed<VisuallyHidden> in run {r.number}</VisuallyHidden>
                      </Link>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {runs !== undefined && count > runs.length && (
        <p className="muted small">
          The last {runs.length} of {count} runs.
        </p>
      )}
    </section>
  )
}
