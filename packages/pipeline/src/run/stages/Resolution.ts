/**
 * The `resolve` stage: one extraction agent — consistency across documents, then one resolved value per
 * atomic value (agent × dimension values) with status, references and sources; text values read by OCR
 * then held against each other across the project's documents (`Agreement.ts`). With web search (see
 * `WebFindings.ts`), what the search finds joins the document extractions as candidates.
 */
import { type ExtractionRow, type TaskRow, transactionOn } from "@dxs/db"
import {
  agentStillAt,
  currentAtomicValues,
  ensureAtomicValues,
  markWebSearched,
  nonWebExtractions,
  planWebSearches,
  type ResolvedRow,
  replaceWebExtractions,
  writeResults,
} from "@dxs/db/repositories/Results"
import { findRunningRun } from "@dxs/db/repositories/Runs"
import type { TaskDb, TaskTrx } from "@dxs/db/TaskQueue"
import { extractionConfidence, resultConfidence } from "@dxs/domain/Confidence"
import { groundingAttention } from "@dxs/domain/Resolution"
import { Array as Arr, Effect, Option } from "effect"
import {
  type AgentSpec,
  addUsage,
  LanguageModel,
  type LanguageModelShape,
  type ModelError,
  noUsage,
  type Usage,
} from "../../llm/LanguageModel.ts"
import type { WebSearchShape } from "../../websearch/WebSearch.ts"
import {
  agentSpec,
  loadAgents,
  loadDocuments,
  type ProjectAgent,
  type ProjectDocument,
} from "../ProjectState.ts"
import { agreeOcrReadings } from "./Agreement.ts"
import {
  type AgentPayload,
  commitTask,
  expectedCombinations,
  type InstanceRef,
  instanceInputs,
  notFoundText,
  resultName,
  type StageError,
  type StageRun,
  type StageShape,
  storedValue,
} from "./Stage.ts"
import { type Candidate, provenance, searchWeb, type WebFinding, WebSearch, webQuery } from "./WebFindings.ts"

type Sources = ResolvedRow["sources"][number]

/** How an extraction's citation was checked: grounded or not, and its confidence (null: unknown). */
interface Check {
  readonly grounded: boolean
  readonly confidence: number | null
}

/** An atomic value of the agent: its dimension instances and the web search it gets. */
interface Atomic {
  readonly id: string
  readonly instances: ReadonlyArray<InstanceRef>
  readonly query: string
}

/** The check of each extraction by id, as consistency and confidence read it. */
const extractionChecks = (extractions: ReadonlyArray<ExtractionRow>): ((id: string) => Check) => {
  // Web findings are not checked against a page: they count as grounded, of unknown confidence. An
  // ungrounded extraction stored without a confidence gets the ceiling of its kind.
  const checked = new Map(
    extractions.map((e) => [
      e.id,
      {
        grounded: e.grounded,
        confidence: e.confidence ?? (e.grounded ? null : extractionConfidence({ grounded: false })),
      },
    ]),
  )
  return (id: string) => checked.get(id) ?? { grounded: true, confidence: null }
}

/**
 * Atomic values first (idempotent), so the model's work can be keyed by them; with web search, the
 * searches to do are recorded unsearched (the agent's web-search progress counts them).
 */
const prepareAtomics = (
  db: TaskDb,
  input: {
    readonly projectId: string
    readonly agent: ProjectAgent
    readonly configVersion: number
    readonly combinations: ReadonlyArray<ReadonlyArray<InstanceRef>>
    readonly searchesWeb: boolean
  },
): Effect.Effect<ReadonlyArray<Atomic>> =>
  transactionOn(db, (trx) =>
    Effect.gen(function* () {
      const { agent, combinations } = input
      const made = yield* ensureAtomicValues(
        trx,
        input.projectId,
        combinations.map((instances) => ({
          agentId: agent.row.id,
          instances: instanceInputs(instances),
        })),
      )
      const out = combinations.map((instances, i) => ({
        id: made[i]!.id,
        instances,
        query: webQuery(agent, instances),
      }))
      yield* planWebSearches(trx, {
        agentId: agent.row.id,
        configVersion: input.configVersion,
        searches: input.searchesWeb ? out.map((a) => ({ atomicValueId: a.id, query: a.query })) : [],
      })
      return out
    }),
  )

/** Each atomic value's web search, one after the other, each marked searched as it is done. */
const searchAtomics = (
  db: TaskDb,
  model: LanguageModelShape,
  webSearch: WebSearchShape,
  input: {
    readonly agentId: string
    readonly spec: AgentSpec
    readonly referenceDate: string
    readonly atomics: ReadonlyArray<Atomic>
  },
): Effect.Effect<
  { readonly usage: Usage; readonly webFindings: ReadonlyMap<string, ReadonlyArray<WebFinding>> },
  StageError
> =>
  Effect.gen(function* () {
    let usage = noUsage
    const webFindings = new Map<string, ReadonlyArray<WebFinding>>()
    for (const atomic of input.atomics) {
      const r = yield* searchWeb(
        model,
        webSearch,
        { atomicValueId: atomic.id, query: atomic.query, referenceDate: input.referenceDate },
        input.spec,
      )
      usage = addUsage(usage, r.usage)
      webFindings.set(atomic.id, r.findings)
      yield* markWebSearched(db, {
        agentId: input.agentId,
        atomicValueId: atomic.id,
        resultCount: r.hits,
      })
    }
    return { usage, webFindings }
  })

/**
 * The atomic value's candidates: its extractions (`extractions`, the atomic value's own) from documents still
 * there, then its web findings.
 */
const candidatesOf = (
  extractions: ReadonlyArray<ExtractionRow>,
  liveDocuments: ReadonlyMap<string, ProjectDocument>,
  findings: ReadonlyArray<WebFinding>,
): Array<Candidate> => [
  ...extractions
    .filter((e) => e.document_id === null || liveDocuments.has(e.document_id))
    .map(
      (e): Candidate => ({
        candidate: {
          id: e.id,
          value: e.value,
          sourceType: e.source_type,
          documentName: e.document_id === null ? null : liveDocuments.get(e.document_id)!.name,
          pageNumber: e.page_number,
          relevantPassage: e.relevant_passage,
        },
        documentId: e.document_id,
        web: undefined,
      }),
    ),
  ...findings.map(
    (w): Candidate => ({
      candidate: {
        id: w.id,
        value: w.value,
        sourceType: "web",
        documentName: null,
        pageNumber: null,
        relevantPassage: w.relevantPassage,
      },
      documentId: null,
      web: w,
    }),
  ),
]

/** What the result cites: a reference per cited candidate, and the document pages they are on. */
const citationsOf = (
  atomicId: string,
  cited: ReadonlyArray<Candidate>,
  liveDocuments: ReadonlyMap<string, ProjectDocument>,
): Pick<ResolvedRow, "references" | "sources"> => {
  const references: Record<string, readonly [string, number | null]> = {}
  const sources = new Map<string, Sources>()
  for (const { candidate: e, documentId, web } of cited) {
    const documentName =
      web !== undefined ? web.source.title : documentId === null ? "web" : liveDocuments.get(documentId)!.name
    references[e.id] = [documentName, web === undefined ? e.pageNumber : null]
    if (web === undefined && documentId !== null && e.pageNumber !== null) {
      const key = `${documentId}:${e.pageNumber}`
      if (!sources.has(key))
        sources.set(key, {
          document_name: documentName,
          page_number: e.pageNumber,
          document_id: documentId,
          atomic_value_ids: [atomicId],
        })
    }
  }
  return { references, sources: [...sources.values()] }
}

/** One atomic value's result: its candidates checked for consistency, then resolved by the model. */
const resolveAtomic = (
  model: LanguageModelShape,
  input: {
    readonly agent: ProjectAgent
    readonly spec: AgentSpec
    readonly atomic: Atomic
    readonly mine: ReadonlyArray<Candidate>
    readonly liveDocuments: ReadonlyMap<string, ProjectDocument>
    readonly checkOf: (id: string) => Check
  },
): Effect.Effect<{ readonly row: ResolvedRow; readonly usage: Usage }, ModelError> =>
  Effect.gen(function* () {
    const { agent, spec, atomic, mine, checkOf } = input
    let usage = noUsage
    const name = resultName(agent.row.name, atomic.instances)
    const candidates = mine.map((c) => c.candidate)
    let verdicts: ReadonlyArray<{ id: string; consistent: boolean; justification: string }> = []
    let summary: string | null = null
    if (candidates.length > 0) {
      const c = yield* model.checkConsistency({
        agent: spec,
        resultName: name,
        extractions: candidates,
      })
      usage = addUsage(usage, c.usage)
      verdicts = c.verdicts
      summary = c.summary
    }
    const consistentById = new Map(verdicts.map((v) => [v.id, v.consistent]))
    const r = yield* model.resolve({
      agent: spec,
      resultName: name,
      extractions: candidates.map((c) => ({ ...c, consistent: consistentById.get(c.id) ?? null })),
    })
    usage = addUsage(usage, r.usage)
    const used = new Set(r.usedExtractionIds)
    const cited = mine.filter((c) => used.has(c.candidate.id))
    const { references, sources } = citationsOf(atomic.id, cited, input.liveDocuments)
    const noResult = r.value === null || r.status === "No result"
    const origin = noResult ? { sourceType: "document", webSupplement: null } : provenance(cited)
    const { status, justification } = noResult
      ? r
      : groundingAttention(
          r,
          cited.map((c) => checkOf(c.candidate.id)),
        )
    const row: ResolvedRow = {
      atomicValueId: atomic.id,
      resultName: name,
      value: noResult ? notFoundText(agent) : storedValue(spec.valueType, r.value),
      status: noResult ? "No result" : status,
      justification,
      references,
      sources,
      sourceType: origin.sourceType,
      webSupplement: origin.webSupplement,
      verdicts,
      summary: summary === null ? null : atomic.instances.length === 0 ? summary : `${name}: ${summary}`,
      confidence: resultConfidence({
        extractions: candidates.map((c) => ({
          confidence: checkOf(c.id).confidence,
          consistent: consistentById.get(c.id) ?? null,
        })),
        status: noResult ? "No result" : status,
      }),
    }
    return { row, usage }
  })

/** The task's writes, unless the agent changed: its web findings as web extractions, and its results. */
const writeAgentResults = (
  trx: TaskTrx,
  input: {
    readonly projectId: string
    readonly agentId: string
    readonly configVersion: number
    readonly runId: string
    readonly atomics: ReadonlyArray<Atomic>
    readonly webFindings: ReadonlyMap<string, ReadonlyArray<WebFinding>>
    readonly rows: ReadonlyArray<ResolvedRow>
  },
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const { projectId, agentId, configVersion } = input
    if (!(yield* agentStillAt(trx, agentId, configVersion))) return
    yield* replaceWebExtractions(trx, {
      projectId,
      agentId,
      configVersion,
      extractions: input.atomics.flatMap((atomic) =>
        (input.webFindings.get(atomic.id) ?? []).map((w) => ({ ...w, atomicValueId: atomic.id })),
      ),
    })
    yield* writeResults(trx, { projectId, agentId, configVersion, rows: input.rows, runId: input.runId })
  })

export class Resolution extends Effect.Service<Resolution>()("@dxs/pipeline/Resolution", {
  effect: Effect.gen(function* () {
    const model = yield* LanguageModel
    const configuredSearch = Option.getOrUndefined(yield* Effect.serviceOption(WebSearch))
    const run = (task: TaskRow, ctx: StageRun) =>
      Effect.gen(function* () {
        const p = task.payload as unknown as AgentPayload
        const runInfo = yield* findRunningRun(ctx.db, p.runId)
        if (!runInfo) return
        const agent = (yield* loadAgents(ctx.db, runInfo.projectId)).find((a) => a.row.id === p.agentId)
        if (!agent || agent.row.is_draft) return yield* commitTask(ctx, p.runId, noUsage)
        const documents = yield* loadDocuments(ctx.db, runInfo.projectId)
        const configVersion = agent.row.config_version
        const existing = yield* currentAtomicValues(ctx.db, agent.row.id, configVersion)
        const combinations = expectedCombinations(
          agent,
          documents,
          existing.flatMap((a) => a.dimension_values),
        )
        const liveDocuments = new Map(documents.map((d) => [d.id, d]))
        // Web extractions are replaced by this task's searches (or dropped when it does not search).
        const extractions = yield* nonWebExtractions(ctx.db, agent.row.id, configVersion)
        const checkOf = extractionChecks(extractions)
        const spec = agentSpec(agent.row)
        const webSearch =
          agent.row.agent_type === "extraction" && agent.row.enable_web_search ? configuredSearch : undefined

        const atomics = yield* prepareAtomics(ctx.db, {
          projectId: runInfo.projectId,
          agent,
          configVersion,
          combinations,
          searchesWeb: webSearch !== undefined,
        })

        let usage = noUsage
        let webFindings: ReadonlyMap<string, ReadonlyArray<WebFinding>> = new Map()
        if (webSearch !== undefined) {
          const searched = yield* searchAtomics(ctx.db, model, webSearch, {
            agentId: agent.row.id,
            spec,
            referenceDate: runInfo.referenceDate,
            atomics,
          })
          usage = searched.usage
          webFindings = searched.webFindings
        }

        const rows: Array<ResolvedRow> = []
        // Each atomic value's own extractions, grouped once (not filtered from all of them per value).
        const extractionsOf = Arr.groupBy(extractions, (e) => e.atomic_value_id)
        for (const atomic of atomics) {
          const mine = candidatesOf(
            extractionsOf[atomic.id] ?? [],
            liveDocuments,
            webFindings.get(atomic.id) ?? [],
          )
          const resolved = yield* resolveAtomic(model, { agent, spec, atomic, mine, liveDocuments, checkOf })
          usage = addUsage(usage, resolved.usage)
          rows.push(resolved.row)
        }
        const agreed = yield* agreeOcrReadings(ctx.db, spec.valueType, rows)

        yield* commitTask(ctx, p.runId, usage, (trx) =>
          writeAgentResults(trx, {
            projectId: runInfo.projectId,
            agentId: agent.row.id,
            configVersion,
            runId: p.runId,
            atomics,
            webFindings,
            rows: agreed,
          }),
        )
      })
    return { run } satisfies StageShape
  }),
}) {}
