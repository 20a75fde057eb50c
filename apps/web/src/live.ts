/**
 * Live run progress: the GraphQL `runProgress(projectId)` subscription over Server-Sent Events, a GET of
 * `/graphql` with the session cookie (EventSource asks for `text/event-stream`). Each state arrives in the
 * shape of REST `GET …/agents/status/`.
 */
import type { AgentConsistency, AgentProgress, AgentStatus } from "@dxs/domain/Records"

const STAGE = "{ total completed percentage }"

export const RUN_PROGRESS_SUBSCRIPTION = `subscription RunProgress($projectId: ID!) {
  runProgress(projectId: $projectId) {
    pipeline_running
    agents {
      agent_id
      consistency
      progress { parsing ${STAGE} extraction ${STAGE} web_search ${STAGE} resolution ${STAGE} is_running is_pending }
    }
  }
}`

export interface RunProgressPayload {
  readonly pipeline_running: boolean
  readonly agents: ReadonlyArray<{
    readonly agent_id: string
    readonly progress: AgentProgress
    readonly consistency: AgentConsistency | null
  }>
}

/** A `runProgress` state as the REST status answer. */
export const toAgentStatus = (p: RunProgressPayload): AgentStatus => {
  const progress: Record<string, AgentProgress> = {}
  const consistency: Record<string, AgentConsistency> = {}
  for (const a of p.agents) {
    progress[a.agent_id] = a.progress
    if (a.consistency !== null) consistency[a.agent_id] = a.consistency
  }
  return { progress, consistency, pipeline_running: p.pipeline_running }
}

/** The address of the subscription for `projectId` (GraphQL over SSE by GET). */
export const runProgressUrl = (projectId: string): string =>
  `/graphql?query=${encodeURIComponent(RUN_PROGRESS_SUBSCRIPTION)}&variables=${encodeURIComponent(
    JSON.stringify({ projectId }),
  )}`

/**
 * Follows the project's progress: `onState` for each state (the current one first); `onEnd` once when the
 * stream ends, fails or is refused (then the caller polls instead). Returns the function that closes it.
 */
export function subscribeRunProgress(
  projectId: string,
  onState: (state: AgentStatus) => void,
  onEnd: (reason: string | undefined) => void,
): () => void {
  if (typeof EventSource === "undefined") {
    onEnd("This browser cannot follow live progress.")
    return () => undefined
  }
  const source = new EventSource(runProgressUrl(projectId), { withCredentials: true })
  let closed = false
  const end = (reason: string | undefined) => {
    if (closed) return
    closed = true
    source.close()
    onEnd(reason)
  }
  source.addEventListener("next", (e: MessageEvent<string>) => {
    if (closed) return
    let payload: {
      data?: { runProgress?: RunProgressPayload | null } | null
      errors?: ReadonlyArray<{ message?: string }>
    }
    try {
      payload = JSON.parse(e.data)
    } catch {
      return end("The live progress sent something unreadable.")
    }
    const state = payload.data?.runProgress
    if (payload.errors?.length || !state) return end(payload.errors?.[0]?.message ?? "No live progress.")
    onState(toAgentStatus(state))
  })
  source.addEventListener("complete", () => end(undefined))
  // EventSource would reconnect by itself; the caller polls instead
  source.addEventListener("error", () => end("The live progress stream was interrupted."))
  return () => {
    closed = true
    source.close()
  }
}
