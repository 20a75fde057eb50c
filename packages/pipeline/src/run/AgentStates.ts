/**
 * The agents' pipeline states, derived from the pipeline's records (spec: "These follow from the
 * pipeline state; no operation sets them directly"):
 * - `extraction_status`: `Pending` while extractions are missing or in flight, or the resolution is older
 *   than the latest extraction; `Processed` once resolved with at least one found value; `No Result` when
 *   resolved and nothing was found.
 * - `requires_attention`: some current result is `Requires attention`.
 * - progress per stage and consistency counts for the agents/status record. The `web_search` stage counts
 *   the web searches of the agent's resolution (one per result) recorded by a worker with a search
 *   provider; an agent without `enable_web_search`, or never resolved with a provider, counts 0 of 0.
 */
import type { Conn } from "@dxs/db"
import * as ProjectReads from "@dxs/db/repositories/ProjectReads"
import type { ExtractionStatus } from "@dxs/domain/Enums"
import { dimensionsKey, type SnapshotDimension } from "@dxs/domain/LaunchPlanner"
import { Effect } from "effect"

export interface StageProgress {
  readonly total: number
  readonly completed: number
  readonly percentage: number
}

export interface AgentProgress {
  readonly parsing: StageProgress
  readonly extraction: StageProgress
  readonly web_search: StageProgress
  readonly resolution: StageProgress
  readonly is_running: boolean
  readonly is_pending: boolean
}

export interface ConsistencyCounts {
  readonly consistent_count: number
  readonly missing_count: number
  readonly inconsistent_count: number
  readonly ignored_count: number
  readonly total_count: number
}

export interface AgentState {
  readonly extractionStatus: ExtractionStatus
  readonly requiresAttention: boolean
  readonly progress: AgentProgress
  readonly consistency: ConsistencyCounts
}

const stage = (total: number, completed: number): StageProgress => ({
  total,
  completed: Math.min(completed, total),
  percentage: total === 0 ? 100 : Math.floor((100 * Math.min(completed, total)) / total),
})

/** An agent's state from what its records and tallies say (one row of `agentStateInputs`). */
const deriveAgentState = (input: ProjectReads.AgentStateInputRow): AgentState => {
  const isExtraction = input.agent_type === "extraction"
  const key = dimensionsKey(
    input.dimensions.map(([dimensionId, areValuesDynamic, source, values]) => ({
      dimensionId,
      areValuesDynamic,
      source: source as SnapshotDimension["source"],
      values,
    })),
  )
  const done = isExtraction ? (input.done[key] ?? 0) : 0
  const [documentCount, processed, parsedOrFailed] = input.documents
  const expected = isExtraction ? processed : 0
  const parsingDone = parsedOrFailed === documentCount
  // A resolution counts as complete only if it is newer than every extraction of the agent (as the
  // planner's snapshot says), so an agent re-extracted by an interrupted run is not resolved.
  const latest = input.latest === null ? 0 : new Date(input.latest).getTime()
  const r = input.resolution
  const isResolved = r?.complete && r.config === input.config_version && new Date(r.at).getTime() >= latest
  const upToDate = !input.is_draft && parsingDone && done === expected && isResolved
  const byStatus = input.results
  const total = Object.values(byStatus).reduce((a, b) => a + b, 0)
  const found = total - (byStatus["No result"] ?? 0)
  const extractionStatus: ExtractionStatus = !upToDate ? "Pending" : found > 0 ? "Processed" : "No Result"
  const webSearch = input.enable_web_search && isExtraction ? input.searches : null
  return {
    extractionStatus,
    requiresAttention: (byStatus["Requires attention"] ?? 0) > 0,
    progress: {
      parsing: stage(documentCount, parsedOrFailed),
      extraction: stage(expected, done),
      web_search: webSearch ? stage(webSearch[0], webSearch[1]) : stage(0, 0),
      resolution: stage(Math.max(1, total), isResolved ? Math.max(1, total) : 0),
      is_running: input.active,
      is_pending: extractionStatus === "Pending",
    },
    consistency: {
      consistent_count: byStatus.Resolved ?? 0,
      missing_count: byStatus["No result"] ?? 0,
      inconsistent_count: (byStatus["Requires attention"] ?? 0) + (byStatus["Not resolved"] ?? 0),
      ignored_count: byStatus.Ignored ?? 0,
      total_count: total,
    },
  }
}

/** The states of the agents whose inputs these are (`ProjectReads.agentStateInputs`), by agent id. */
export const deriveAgentStates = (
  inputs: ReadonlyArray<ProjectReads.AgentStateInputRow>,
): ReadonlyMap<string, AgentState> => new Map(inputs.map((input) => [input.id, deriveAgentState(input)]))

/**
 * Per project, every agent's state (drafts included: always `Pending`), from one statement whatever the
 * number of projects and agents (`ProjectReads.agentStateInputs`: records and tallies, never rows counted
 * per request); `agentIds`: only these agents' states (a results page needs those of its rows' agents).
 */
export const loadAgentStatesOfProjects = (
  db: Conn,
  projectIds: ReadonlyArray<string>,
  agentIds?: ReadonlyArray<string>,
): Effect.Effect<ReadonlyMap<string, ReadonlyMap<string, AgentState>>> =>
  Effect.gen(function* () {
    const ids = [...new Set(projectIds)]
    if (ids.length === 0) return new Map()
    const only = agentIds === undefined ? undefined : [...new Set(agentIds)]
    const out = new Map(ids.map((id) => [id, new Map<string, AgentState>()]))
    if (only?.length === 0) return out
    for (const input of yield* ProjectReads.agentStateInputs(db, ids, only))
      out.get(input.project_id)?.set(input.id, deriveAgentState(input))
    return out
  })

/** Every agent's state (drafts included: always `Pending`); `agentIds`: only these agents'. */
export const loadAgentStates = (
  db: Conn,
  projectId: string,
  agentIds?: ReadonlyArray<string>,
): Effect.Effect<ReadonlyMap<string, AgentState>> =>
  Effect.map(loadAgentStatesOfProjects(db, [projectId], agentIds), (m) => m.get(projectId)!)
