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
import { projectsWithActiveRuns } from "@dxs/db/repositories/Runs"
import type { ExtractionStatus } from "@dxs/domain/Enums"
import { Effect } from "effect"
import {
  agentDimensionsKey,
  countDocuments,
  type DocumentCounts,
  loadAgentsOfProjects,
  loadDocumentCountsOfProjects,
  loadRecordsOfProjects,
  type ProjectAgent,
  type ProjectState,
} from "./ProjectState.ts"

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

/** Counts of each agent's current results (at its config version) by resolution status. */
const resultCounts = (db: Conn, projectIds: ReadonlyArray<string>, agentIds: AgentFilter) =>
  Effect.map(ProjectReads.resultCountsByStatus(db, projectIds, agentIds), (rows) => {
    const byAgent = new Map<string, Map<string, number>>()
    for (const r of rows) {
      const m = byAgent.get(r.agent_id) ?? new Map<string, number>()
      m.set(r.resolution_status, r.n)
      byAgent.set(r.agent_id, m)
    }
    return byAgent
  })

/** Per agent, its web searches at its current config version: recorded, and done. */
const webSearchCounts = (db: Conn, projectIds: ReadonlyArray<string>, agentIds: AgentFilter) =>
  Effect.map(
    ProjectReads.webSearchCounts(db, projectIds, agentIds),
    (rows) => new Map(rows.map((r) => [r.agent_id, { total: r.total, done: r.done }])),
  )

/**
 * Per agent, what its extraction records say, counted in PostgreSQL instead of reading every pair (a large
 * project has one per agent and document): by dimensions key, how many of the project's processed documents
 * have a pair at the agent's current config version and the document's current version; and when the agent
 * last extracted anything (a resolution older than that is not complete).
 */
interface PairSummary {
  readonly doneByKey: ReadonlyMap<string, number>
  readonly latestExtraction: number
}

const pairSummaries = (
  db: Conn,
  projectIds: ReadonlyArray<string>,
  agentIds: AgentFilter,
): Effect.Effect<ReadonlyMap<string, PairSummary>> =>
  Effect.map(ProjectReads.extractionPairSummaries(db, projectIds, agentIds), (rows) => {
    const out = new Map<string, { doneByKey: Map<string, number>; latestExtraction: number }>()
    for (const r of rows) {
      const summary = out.get(r.agent_id) ?? { doneByKey: new Map<string, number>(), latestExtraction: 0 }
      summary.doneByKey.set(r.dimensions_key, r.done)
      summary.latestExtraction = Math.max(summary.latestExtraction, new Date(r.latest).getTime())
      out.set(r.agent_id, summary)
    }
    return out
  })

/** What the agents' states are derived from: the project's document counts, agents and resolution records. */
interface StatesInput {
  readonly documents: DocumentCounts
  readonly agents: ReadonlyArray<ProjectAgent>
  readonly resolutions: ProjectState["records"]["resolutions"]
}

/** What the states need beyond the project state, for the agents of all the projects (keyed by agent id). */
interface AgentCounts {
  readonly pairs: ReadonlyMap<string, PairSummary>
  readonly counts: ReadonlyMap<string, ReadonlyMap<string, number>>
  readonly active: ReadonlySet<string>
  readonly searches: ReadonlyMap<string, { readonly total: number; readonly done: number }>
}

/** Only these agents (a non-empty list), or every agent of the projects. */
type AgentFilter = ReadonlyArray<string> | undefined

const loadAgentCounts = (
  db: Conn,
  projectIds: ReadonlyArray<string>,
  agentIds: AgentFilter = undefined,
): Effect.Effect<AgentCounts> =>
  Effect.all(
    {
      pairs: pairSummaries(db, projectIds, agentIds),
      counts: resultCounts(db, projectIds, agentIds),
      active: ProjectReads.agentsWithUnfinishedTasks(db, projectIds),
      searches: webSearchCounts(db, projectIds, agentIds),
    },
    { concurrency: "unbounded" },
  )

export const computeAgentStates = (
  db: Conn,
  projectId: string,
  state: ProjectState,
): Effect.Effect<ReadonlyMap<string, AgentState>> =>
  Effect.map(loadAgentCounts(db, [projectId]), (counts) =>
    deriveAgentStates(
      {
        documents: countDocuments(state.documents),
        agents: state.agents,
        resolutions: state.records.resolutions,
      },
      counts,
    ),
  )

const deriveAgentStates = (
  state: StatesInput,
  { pairs, counts, active, searches }: AgentCounts,
): ReadonlyMap<string, AgentState> => {
  // A resolution counts as complete only if it is newer than every extraction of the agent (as the
  // planner's snapshot says), so an agent re-extracted by an interrupted run is not resolved.
  const resolved = new Set(
    state.resolutions
      .filter(
        (r) =>
          r.complete && new Date(r.resolved_at).getTime() >= (pairs.get(r.agent_id)?.latestExtraction ?? 0),
      )
      .map((r) => `${r.agent_id}:${r.agent_config_version}`),
  )
  const { total: documentCount, processed, parsedOrFailed } = state.documents
  const out = new Map<string, AgentState>()
  for (const agent of state.agents) {
    const row = agent.row
    const isExtraction = row.agent_type === "extraction"
    const key = agentDimensionsKey(agent)
    const done = isExtraction ? (pairs.get(row.id)?.doneByKey.get(key) ?? 0) : 0
    const expected = isExtraction ? processed : 0
    const parsingDone = parsedOrFailed === documentCount
    const isResolved = resolved.has(`${row.id}:${row.config_version}`)
    const upToDate = !row.is_draft && parsingDone && done === expected && isResolved
    const byStatus = counts.get(row.id) ?? new Map<string, number>()
    const total = [...byStatus.values()].reduce((a, b) => a + b, 0)
    const found = total - (byStatus.get("No result") ?? 0)
    const extractionStatus: ExtractionStatus = !upToDate ? "Pending" : found > 0 ? "Processed" : "No Result"
    const webSearch = row.enable_web_search && isExtraction ? searches.get(row.id) : undefined
    out.set(row.id, {
      extractionStatus,
      requiresAttention: (byStatus.get("Requires attention") ?? 0) > 0,
      progress: {
        parsing: stage(documentCount, parsedOrFailed),
        extraction: stage(expected, done),
        web_search: webSearch ? stage(webSearch.total, webSearch.done) : stage(0, 0),
        resolution: stage(Math.max(1, total), isResolved ? Math.max(1, total) : 0),
        is_running: active.has(row.id),
        is_pending: extractionStatus === "Pending",
      },
      consistency: {
        consistent_count: byStatus.get("Resolved") ?? 0,
        missing_count: byStatus.get("No result") ?? 0,
        inconsistent_count: (byStatus.get("Requires attention") ?? 0) + (byStatus.get("Not resolved") ?? 0),
        ignored_count: byStatus.get("Ignored") ?? 0,
        total_count: total,
      },
    })
  }
  return out
}

/**
 * Per project, every agent's state (drafts included: always `Pending`), with as many statements as for
 * one project; `agentIds`: only these agents' states (a results page needs those of its rows' agents only,
 * and each statement then reads only their records).
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
    if (only?.length === 0) return new Map(ids.map((id) => [id, new Map()]))
    // Counts, not every document with its tags: a project's agent states are read on every results page.
    const [documents, agents, records, counts] = yield* Effect.all(
      [
        loadDocumentCountsOfProjects(db, ids),
        loadAgentsOfProjects(db, ids, only),
        loadRecordsOfProjects(db, ids, false, only),
        loadAgentCounts(db, ids, only),
      ],
      { concurrency: "unbounded" },
    )
    return new Map(
      ids.map((id) => [
        id,
        deriveAgentStates(
          {
            documents: documents.get(id)!,
            agents: agents.get(id) ?? [],
            resolutions: records.get(id)!.resolutions,
          },
          counts,
        ),
      ]),
    )
  })

/** Every agent's state (drafts included: always `Pending`); `agentIds`: only these agents'. */
export const loadAgentStates = (
  db: Conn,
  projectId: string,
  agentIds?: ReadonlyArray<string>,
): Effect.Effect<ReadonlyMap<string, AgentState>> =>
  Effect.map(loadAgentStatesOfProjects(db, [projectId], agentIds), (m) => m.get(projectId)!)

/** The projects among `projectIds` with a run queued or running. */
export const runningPipelines = (
  db: Conn,
  projectIds: ReadonlyArray<string>,
): Effect.Effect<ReadonlySet<string>> => projectsWithActiveRuns(db, projectIds)

/** True while a run of the project is queued or running. */
export const isPipelineRunning = (db: Conn, projectId: string): Effect.Effect<boolean> =>
  Effect.map(runningPipelines(db, [projectId]), (running) => running.has(projectId))
