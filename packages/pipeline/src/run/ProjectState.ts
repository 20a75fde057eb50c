/**
 * What the pipeline reads about a project: its documents, its agents with their dimensions and
 * references, and the records of finished extraction and resolution work. The launch planner's snapshot
 * and the agents' derived states both come from here.
 */
import type { AgentRow, Conn } from "@dxs/db"
import * as ProjectReads from "@dxs/db/repositories/ProjectReads"
import { activeRunsOfProjects } from "@dxs/db/repositories/Runs"
import type { AgentType, DimensionSource, DocumentStatus } from "@dxs/domain/Enums"
import type { ProjectSnapshot, SnapshotDimension } from "@dxs/domain/LaunchPlanner"
import { dimensionsKey } from "@dxs/domain/LaunchPlanner"
import { Effect } from "effect"
import type { AgentSpec, DimensionQuery, ValueType } from "../llm/LanguageModel.ts"

export interface AttachedDimension {
  readonly dimensionId: string
  readonly name: string
  readonly description: string
  readonly exampleValues: string
  readonly source: DimensionSource
  readonly tagKey: string | null
  readonly areValuesDynamic: boolean
  readonly values: ReadonlyArray<string>
}

export interface ProjectAgent {
  readonly row: AgentRow
  /** In display order. */
  readonly dimensions: ReadonlyArray<AttachedDimension>
  /** Ids of referenced agents (derived agents). */
  readonly references: ReadonlyArray<string>
}

export interface ProjectDocument {
  readonly id: string
  readonly name: string
  readonly status: DocumentStatus
  readonly version: number
  readonly parseInFlight: boolean
  readonly tags: Readonly<Record<string, string>>
}

/** `items` by project: an entry (possibly empty) for each of `projectIds`, items in their given order. */
/** Items grouped by their project, every project of `projectIds` present (empty when it has none). */
export const byProject = <A>(
  projectIds: ReadonlyArray<string>,
  items: ReadonlyArray<A>,
  projectOf: (item: A) => string,
): Map<string, Array<A>> => {
  const out = new Map<string, Array<A>>(projectIds.map((id) => [id, []]))
  for (const item of items) out.get(projectOf(item))?.push(item)
  return out
}

/** A live document's row as the pipeline reads it. */
export const projectDocumentOf = (
  r: ProjectReads.LiveDocumentRow,
  parseInFlight: boolean,
): ProjectDocument => ({
  id: r.id,
  name: r.file_name,
  status: r.status as DocumentStatus,
  version: r.version,
  parseInFlight,
  tags: r.tags,
})

/**
 * Live documents of each project (not queued for archival), oldest first; `only`: just this one (whose
 * `parseInFlight` is then not looked up: false).
 */
const loadDocumentsOfProjects = (
  db: Conn,
  projectIds: ReadonlyArray<string>,
  only?: string,
): Effect.Effect<ReadonlyMap<string, ReadonlyArray<ProjectDocument>>> =>
  projectIds.length === 0
    ? Effect.succeed(new Map())
    : Effect.map(
        Effect.all(
          [
            ProjectReads.liveDocumentsOfProjects(db, projectIds, only),
            only !== undefined
              ? Effect.succeed<ReadonlySet<string>>(new Set<string>())
              : ProjectReads.documentsBeingParsed(db, projectIds),
          ],
          { concurrency: "unbounded" },
        ),
        ([rows, inFlight]) => {
          const byId = byProject(projectIds, rows, (r) => r.project_id)
          return new Map(
            [...byId].map(([projectId, list]) => [
              projectId,
              list.map((r) => projectDocumentOf(r, inFlight.has(r.id))),
            ]),
          )
        },
      )

/**
 * Live documents of the project (not queued for archival), oldest first; `only`: just this one (whose
 * `parseInFlight` is then not looked up: false).
 */
export const loadDocuments = (
  db: Conn,
  projectId: string,
  only?: string,
): Effect.Effect<ReadonlyArray<ProjectDocument>> =>
  Effect.map(loadDocumentsOfProjects(db, [projectId], only), (m) => m.get(projectId) ?? [])

/**
 * Each project's agents (drafts included), oldest first, with dimensions and references; `only`: just
 * this agent, or just these.
 */
export const loadAgentsOfProjects = (
  db: Conn,
  projectIds: ReadonlyArray<string>,
  only?: string | ReadonlyArray<string>,
): Effect.Effect<ReadonlyMap<string, ReadonlyArray<ProjectAgent>>> =>
  Effect.gen(function* () {
    if (projectIds.length === 0) return new Map()
    if (typeof only !== "string" && only !== undefined && only.length === 0)
      return byProject(projectIds, [], () => "")
    const rows = yield* ProjectReads.agentsWithPartsOfProjects(db, projectIds, only)
    return byProject(projectIds, rows.map(projectAgentOf), (a) => a.row.project_id)
  })

/** An agent as the pipeline works with it, from its row with its parts. */
export const projectAgentOf = ({
  attachments,
  references,
  ...row
}: ProjectReads.AgentWithPartsRow): ProjectAgent => ({
  row,
  dimensions: attachments.map((a) => ({
    dimensionId: a.dimension_id,
    name: a.name,
    description: a.description,
    exampleValues: a.example_values,
    source: a.source as DimensionSource,
    tagKey: a.tag_key,
    areValuesDynamic: a.are_values_dynamic,
    values: a.values,
  })),
  references,
})

/** The project's agents (drafts included), oldest first, with dimensions and references. */
export const loadAgents = (
  db: Conn,
  projectId: string,
  only?: string,
): Effect.Effect<ReadonlyArray<ProjectAgent>> =>
  Effect.map(loadAgentsOfProjects(db, [projectId], only), (m) => m.get(projectId) ?? [])

export const snapshotDimensions = (agent: ProjectAgent): ReadonlyArray<SnapshotDimension> =>
  agent.dimensions.map((d) => ({
    dimensionId: d.dimensionId,
    areValuesDynamic: d.areValuesDynamic,
    source: d.source,
    values: d.values,
  }))

/** The agent's current dimensions key (see LaunchPlanner.dimensionsKey). */
export const agentDimensionsKey = (agent: ProjectAgent): string => dimensionsKey(snapshotDimensions(agent))

export interface PipelineRecords {
  readonly pairs: ReadonlyArray<{
    readonly agent_id: string
    readonly document_id: string
    readonly agent_config_version: number
    readonly document_version: number
    readonly dimensions_key: string
    readonly extracted_at: Date
  }>
  readonly resolutions: ReadonlyArray<{
    readonly agent_id: string
    readonly agent_config_version: number
    readonly complete: boolean
    readonly resolved_at: Date
  }>
}

/**
 * Each project's records of finished extraction and resolution work; `withPairs: false` leaves the
 * extraction pairs out (for readers that count them in the database instead, see AgentStates).
 */
export const loadRecordsOfProjects = (
  db: Conn,
  projectIds: ReadonlyArray<string>,
  withPairs = true,
  agentIds?: ReadonlyArray<string>,
): Effect.Effect<ReadonlyMap<string, PipelineRecords>> =>
  projectIds.length === 0
    ? Effect.succeed(new Map())
    : Effect.map(
        Effect.all(
          [
            withPairs ? ProjectReads.extractionPairsOfProjects(db, projectIds) : Effect.succeed([]),
            agentIds?.length === 0
              ? Effect.succeed([])
              : ProjectReads.resolutionsOfProjects(db, projectIds, agentIds),
          ],
          { concurrency: "unbounded" },
        ),
        ([pairs, resolutions]) => {
          const pairsOf = byProject(projectIds, pairs, (p) => p.project_id)
          const resolutionsOf = byProject(projectIds, resolutions, (r) => r.project_id)
          return new Map(
            projectIds.map((id) => [
              id,
              {
                pairs: (pairsOf.get(id) ?? []).map(({ project_id: _, ...p }) => p),
                resolutions: (resolutionsOf.get(id) ?? []).map(({ project_id: _, ...r }) => r),
              },
            ]),
          )
        },
      )

export const loadRecords = (db: Conn, projectId: string): Effect.Effect<PipelineRecords> =>
  Effect.map(loadRecordsOfProjects(db, [projectId]), (m) => m.get(projectId)!)

export interface ProjectState {
  readonly documents: ReadonlyArray<ProjectDocument>
  readonly agents: ReadonlyArray<ProjectAgent>
  readonly records: PipelineRecords
  readonly run: { readonly running: boolean; readonly queued: boolean }
}

/** The state of each of the projects, with as many statements as for one project. */
export const loadProjectStates = (
  db: Conn,
  projectIds: ReadonlyArray<string>,
): Effect.Effect<ReadonlyMap<string, ProjectState>> =>
  Effect.gen(function* () {
    const ids = [...new Set(projectIds)]
    if (ids.length === 0) return new Map()
    const [documents, agents, records, runs] = yield* Effect.all(
      [
        loadDocumentsOfProjects(db, ids),
        loadAgentsOfProjects(db, ids),
        loadRecordsOfProjects(db, ids),
        activeRunsOfProjects(db, ids),
      ],
      { concurrency: "unbounded" },
    )
    const runsOf = byProject(ids, runs, (r) => r.project_id)
    return new Map(
      ids.map((id) => [
        id,
        {
          documents: documents.get(id) ?? [],
          agents: agents.get(id) ?? [],
          records: records.get(id)!,
          run: {
            running: (runsOf.get(id) ?? []).some((r) => r.status === "running"),
            queued: (runsOf.get(id) ?? []).some((r) => r.status === "queued"),
          },
        },
      ]),
    )
  })

export const loadProjectState = (db: Conn, projectId: string): Effect.Effect<ProjectState> =>
  Effect.map(loadProjectStates(db, [projectId]), (m) => m.get(projectId)!)

/**
 * The planner's snapshot. A resolution counts as complete only if it is newer than every extraction of
 * the agent, so an agent re-extracted by an interrupted run is resolved again.
 */
export const toSnapshot = (state: ProjectState): ProjectSnapshot => {
  const latestExtraction = new Map<string, number>()
  for (const p of state.records.pairs) {
    const t = new Date(p.extracted_at).getTime()
    if (t > (latestExtraction.get(p.agent_id) ?? 0)) latestExtraction.set(p.agent_id, t)
  }
  return {
    documents: state.documents.map((d) => ({
      id: d.id,
      name: d.name,
      status: d.status,
      version: d.version,
      parseInFlight: d.parseInFlight,
    })),
    agents: state.agents.map((a) => ({
      id: a.row.id,
      name: a.row.name,
      type: a.row.agent_type as AgentType,
      configVersion: a.row.config_version,
      isDraft: a.row.is_draft,
      dimensions: snapshotDimensions(a),
      references: a.references,
    })),
    extractions: state.records.pairs.map((p) => ({
      agentId: p.agent_id,
      agentConfigVersion: p.agent_config_version,
      documentId: p.document_id,
      documentVersion: p.document_version,
      dimensionsKey: p.dimensions_key,
    })),
    resolutions: state.records.resolutions.map((r) => ({
      agentId: r.agent_id,
      agentConfigVersion: r.agent_config_version,
      complete: r.complete && new Date(r.resolved_at).getTime() >= (latestExtraction.get(r.agent_id) ?? 0),
    })),
    run: state.run,
  }
}

export const agentSpec = (row: AgentRow): AgentSpec => ({
  id: row.id,
  name: row.name,
  extractionInstructions: row.extraction_instructions,
  valueType: (row.is_evaluation ? "number" : row.value_type) as ValueType,
  unit: row.unit,
  examples: row.examples,
  inconsistencyInstructions: row.inconsistency_instructions,
  resolutionInstructions: row.resolution_instructions,
  enableComplexCalculations: row.enable_complex_calculations_in_resolution,
  valueIfNotFound: row.value_if_not_found,
  derivedPrompt: row.derived_prompt,
  isEvaluation: row.is_evaluation,
})

/** The dimension as a model sees it for one document (fixed value for DOCUMENT and TAG dimensions). */
export const dimensionQuery = (
  dimension: AttachedDimension,
  document: ProjectDocument,
  discovered: ReadonlyArray<string> = [],
): DimensionQuery => ({
  dimensionId: dimension.dimensionId,
  name: dimension.name,
  description: dimension.description,
  exampleValues: dimension.exampleValues,
  kind:
    dimension.source === "DOCUMENT"
      ? "document"
      : dimension.source === "TAG"
        ? "tag"
        : dimension.areValuesDynamic
          ? "dynamic"
          : "static",
  values:
    dimension.source === "DOCUMENT"
      ? [document.name]
      : dimension.source === "TAG"
        ? document.tags[dimension.tagKey ?? dimension.name] !== undefined
          ? [document.tags[dimension.tagKey ?? dimension.name]!]
          : []
        : dimension.areValuesDynamic
          ? discovered
          : dimension.values,
})
