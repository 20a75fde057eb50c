/**
 * The launch planner: from a snapshot of a project, what a launch does (spec launch rules 1-8, DESIGN §3).
 *
 * 1. Launch is project-scoped: the planner sees the whole project.
 * 2. Only agents with outstanding work are planned; the others are reported as `upToDate`.
 * 3. Parsing is planned only for `Pending` documents.
 * 4. Extraction is keyed on agent/document pairs at the agent's config version and the document's version;
 *    pairs that already have an extraction for the agent's current dimensions are skipped.
 * 5. While parsing is in flight the launch waits (`WaitingForParsing`); otherwise the plan parses the
 *    outstanding documents first and extracts them in the same run.
 * 6. During an active run the launch is queued behind it (`QueuedBehindRun`), coalescing with a queued run.
 * 7. Changing one of the eight fields of AgentChange.ts increments the agent's config version, which makes
 *    every pair of that agent outstanding again; untouched agents keep their results.
 * 8. Changed agents and new documents or agents show up as outstanding work at the next launch.
 *
 * A launch is rejected while any document is `Failed`. Draft agents (Draft.ts) are never planned. A relaunch
 * with nothing changed gives a plan with `nothingToDo: true`.
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import { type DependencyGraph, topologicalOrder } from "./AgentReferences.ts"
import type { AgentType, DimensionSource, DocumentStatus } from "./Enums.ts"

// ---------------------------------------------------------------------------------------------------------
// Snapshot

export interface SnapshotDocument {
  readonly id: string
  readonly name: string
  readonly status: DocumentStatus
  readonly version: number
  /** A parse task for this document is queued or running. */
  readonly parseInFlight: boolean
}

export interface SnapshotDimension {
  readonly dimensionId: string
  readonly areValuesDynamic: boolean
  /** Defaults to `CUSTOM`. `DOCUMENT` and `TAG` values are maintained per document by the system. */
  readonly source?: DimensionSource | undefined
  /** The static values (ignored when dynamic or system-managed). */
  readonly values: ReadonlyArray<string>
}

export interface SnapshotAgent {
  readonly id: string
  readonly name: string
  readonly type: AgentType
  /** Incremented whenever a change invalidates the agent's results (AgentChange.ts). */
  readonly configVersion: number
  readonly isDraft: boolean
  readonly dimensions: ReadonlyArray<SnapshotDimension>
  /** Ids of the agents whose resolved values a derived agent consumes. */
  readonly references: ReadonlyArray<string>
}

/** A finished extraction of one agent/document pair, with the `dimensionsKey` of the agent at that time. */
export interface ExtractionRecord {
  readonly agentId: string
  readonly agentConfigVersion: number
  readonly documentId: string
  readonly documentVersion: number
  readonly dimensionsKey: string
}

/** The resolutions of an agent at a config version; `complete` when every expected atomic value is resolved. */
export interface ResolutionRecord {
  readonly agentId: string
  readonly agentConfigVersion: number
  readonly complete: boolean
}

export interface RunState {
  /** A run of the project is running. */
  readonly running: boolean
  /** A run of the project is queued. */
  readonly queued: boolean
}

export interface ProjectSnapshot {
  readonly documents: ReadonlyArray<SnapshotDocument>
  readonly agents: ReadonlyArray<SnapshotAgent>
  readonly extractions: ReadonlyArray<ExtractionRecord>
  readonly resolutions: ReadonlyArray<ResolutionRecord>
  readonly run: RunState
}

// ---------------------------------------------------------------------------------------------------------
// Decision

/** One agent/document pair to extract: everything the idempotency key of its task needs. */
export interface ExtractionPair {
  readonly agentId: string
  readonly agentConfigVersion: number
  readonly documentId: string
  readonly documentVersion: number
  readonly dimensionsKey: string
}

export interface FailedDocument {
  readonly id: string
  readonly name: string
}

export type LaunchDecision = Data.TaggedEnum<{
  /** Some documents failed processing: remove or replace them, then launch again. */
  Rejected: { readonly failedDocuments: ReadonlyArray<FailedDocument>; readonly message: string }
  /** A run is running: the launch is queued (`alreadyQueued`: it coalesces with the queued run). */
  QueuedBehindRun: { readonly alreadyQueued: boolean }
  /** Parsing is in flight: the launch is queued and starts when parsing completes. */
  WaitingForParsing: { readonly parsingDocumentIds: ReadonlyArray<string>; readonly alreadyQueued: boolean }
  /** Derived agents reference each other in a cycle (saving such agents is refused, so this is a safeguard). */
  CyclicReferences: { readonly cycle: ReadonlyArray<string>; readonly message: string }
  /** The work of the run, in stage order. */
  Plan: {
    /** Documents to parse (status `Pending`, no parse in flight). */
    readonly parse: ReadonlyArray<string>
    /** Pairs to extract, agent by agent in snapshot order. */
    readonly extract: ReadonlyArray<ExtractionPair>
    /** Extraction agents to resolve. */
    readonly resolve: ReadonlyArray<string>
    /** Derived agents to derive, dependencies first. */
    readonly derive: ReadonlyArray<string>
    /** Non-draft agents with no outstanding work. */
    readonly upToDate: ReadonlyArray<string>
    /** Draft agents, never planned. */
    readonly drafts: ReadonlyArray<string>
    readonly nothingToDo: boolean
  }
}>
export const LaunchDecision = Data.taggedEnum<LaunchDecision>()
export type Plan = Data.TaggedEnum.Value<LaunchDecision, "Plan">

// ---------------------------------------------------------------------------------------------------------
// Keys

const hasPerDocumentValues = (dimension: SnapshotDimension): boolean =>
  dimension.areValuesDynamic || dimension.source === "DOCUMENT" || dimension.source === "TAG"

/**
 * A canonical key of the queries an agent's dimensions ask for on one document: dimension ids with their
 * static values (order-insensitive). Dynamic and system-managed dimensions contribute only their id, since
 * their values are found per document. An extraction made under another key lacks some expected queries.
 */
export const dimensionsKey = (dimensions: ReadonlyArray<SnapshotDimension>): string =>
  JSON.stringify(
    dimensions
      .map((dimension) => [
        dimension.dimensionId,
        hasPerDocumentValues(dimension) ? null : [...new Set(dimension.values)].sort(),
      ])
      .sort(([a], [b]) => (String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0)),
  )

/**
 * The extraction work of one document version: every agent with an outstanding pair on it. It is one task,
 * and its agents are extracted together, in as few model requests as the request budget allows.
 */
export interface DocumentExtraction {
  readonly documentId: string
  readonly documentVersion: number
  /**
   * The agents at their config versions. Their dimensions' key is not kept (the stage records the
   * agent's key as it reads the agent), so a task of a large project stays small.
   */
  readonly agents: ReadonlyArray<{
    readonly agentId: string
    readonly agentConfigVersion: number
  }>
}

/** The pairs grouped by document version, in the order the documents first appear. */
export const byDocument = (pairs: ReadonlyArray<ExtractionPair>): ReadonlyArray<DocumentExtraction> => {
  const groups = new Map<
    string,
    { documentId: string; documentVersion: number; agents: Array<DocumentExtraction["agents"][number]> }
  >()
  for (const pair of pairs) {
    const key = `${pair.documentId}:${pair.documentVersion}`
    let group = groups.get(key)
    if (group === undefined) {
      group = { documentId: pair.documentId, documentVersion: pair.documentVersion, agents: [] }
      groups.set(key, group)
    }
    group.agents.push({ agentId: pair.agentId, agentConfigVersion: pair.agentConfigVersion })
  }
  return [...groups.values()]
}

/** The idempotency key of a document's extraction task (DESIGN §3), before its run's id. */
export const extractionTaskKey = (work: Pick<DocumentExtraction, "documentId" | "documentVersion">): string =>
  `extract:${work.documentId}:${work.documentVersion}`

const extractionRecordKey = (record: ExtractionRecord | ExtractionPair): string =>
  JSON.stringify([
    record.agentId,
    record.agentConfigVersion,
    record.documentId,
    record.documentVersion,
    record.dimensionsKey,
  ])

const resolutionRecordKey = (agentId: string, agentConfigVersion: number): string =>
  JSON.stringify([agentId, agentConfigVersion])

// ---------------------------------------------------------------------------------------------------------
// Predicates

const isFailed = (document: SnapshotDocument): boolean => document.status === "Failed"
const isParsing = (document: SnapshotDocument): boolean => document.parseInFlight
const needsParse = (document: SnapshotDocument): boolean =>
  document.status === "Pending" && !document.parseInFlight
/** Processed now, or parsed earlier in the same run. */
const isExtractable = (document: SnapshotDocument): boolean =>
  document.status === "Processed" || needsParse(document)

const isPlannable = (agent: SnapshotAgent): boolean => !agent.isDraft
const isExtractionAgent = (agent: SnapshotAgent): boolean => agent.type === "extraction"
const isDerivedAgent = (agent: SnapshotAgent): boolean => agent.type === "derived"

// ---------------------------------------------------------------------------------------------------------
// Planner

const rejectFailedDocuments = (failed: ReadonlyArray<SnapshotDocument>): LaunchDecision => {
  const failedDocuments = failed.map(({ id, name }) => ({ id, name }))
  const names = failedDocuments.map((document) => JSON.stringify(document.name)).join(", ")
  return LaunchDecision.Rejected({
    failedDocuments,
    message: `Launch rejected: ${failedDocuments.length} document(s) failed processing (${names}); remove or replace them and launch again`,
  })
}

const pairFor = (agent: SnapshotAgent, document: SnapshotDocument): ExtractionPair => ({
  agentId: agent.id,
  agentConfigVersion: agent.configVersion,
  documentId: document.id,
  documentVersion: document.version,
  dimensionsKey: dimensionsKey(agent.dimensions),
})

const derivedDependencyGraph = (derivedAgents: ReadonlyArray<SnapshotAgent>): DependencyGraph =>
  new Map(derivedAgents.map((agent) => [agent.id, agent.references]))

/** What a launch does for this snapshot. Pure and deterministic. */
export const planLaunch = (snapshot: ProjectSnapshot): LaunchDecision => {
  const failed = snapshot.documents.filter(isFailed)
  if (failed.length > 0) return rejectFailedDocuments(failed)
  if (snapshot.run.running) return LaunchDecision.QueuedBehindRun({ alreadyQueued: snapshot.run.queued })
  const parsing = snapshot.documents.filter(isParsing)
  if (parsing.length > 0) {
    return LaunchDecision.WaitingForParsing({
      parsingDocumentIds: parsing.map((document) => document.id),
      alreadyQueued: snapshot.run.queued,
    })
  }

  const plannable = snapshot.agents.filter(isPlannable)
  const derivedAgents = plannable.filter(isDerivedAgent)
  const deriveOrder = topologicalOrder(derivedDependencyGraph(derivedAgents))
  if (Either.isLeft(deriveOrder)) {
    const { cycle, message } = deriveOrder.left
    return LaunchDecision.CyclicReferences({ cycle, message })
  }

  const existingExtractions = new Set(snapshot.extractions.map(extractionRecordKey))
  const completeResolutions = new Set(
    snapshot.resolutions
      .filter((record) => record.complete)
      .map((record) => resolutionRecordKey(record.agentId, record.agentConfigVersion)),
  )
  const isExtracted = (pair: ExtractionPair) => existingExtractions.has(extractionRecordKey(pair))
  const isResolved = (agent: SnapshotAgent) =>
    completeResolutions.has(resolutionRecordKey(agent.id, agent.configVersion))

  const parse = snapshot.documents.filter(needsParse).map((document) => document.id)
  const extractableDocuments = snapshot.documents.filter(isExtractable)
  const extractionAgents = plannable.filter(isExtractionAgent)

  const extract = extractionAgents.flatMap((agent) =>
    extractableDocuments.map((document) => pairFor(agent, document)).filter((pair) => !isExtracted(pair)),
  )
  const agentsWithExtractions = new Set(extract.map((pair) => pair.agentId))
  const needsResolve = (agent: SnapshotAgent) => agentsWithExtractions.has(agent.id) || !isResolved(agent)
  const resolve = extractionAgents.filter(needsResolve).map((agent) => agent.id)

  // In dependency order, so a derived agent sees whether the derived agents it reads are re-derived.
  const refreshed = new Set(resolve)
  const derivedById = new Map(derivedAgents.map((agent) => [agent.id, agent]))
  const inputsChanged = (agent: SnapshotAgent) => agent.references.some((id) => refreshed.has(id))
  const derive: Array<string> = []
  for (const id of deriveOrder.right) {
    const agent = derivedById.get(id)!
    if (inputsChanged(agent) || !isResolved(agent)) {
      derive.push(id)
      refreshed.add(id)
    }
  }

  const planned = new Set([...agentsWithExtractions, ...refreshed])
  return LaunchDecision.Plan({
    parse,
    extract,
    resolve,
    derive,
    upToDate: plannable.filter((agent) => !planned.has(agent.id)).map((agent) => agent.id),
    drafts: snapshot.agents.filter((agent) => !isPlannable(agent)).map((agent) => agent.id),
    nothingToDo: parse.length === 0 && extract.length === 0 && resolve.length === 0 && derive.length === 0,
  })
}
