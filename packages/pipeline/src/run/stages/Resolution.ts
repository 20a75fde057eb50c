/**
 * The `resolve` stage: one extraction agent — consistency across documents, then one resolved value per
 * atomic value (agent × dimension values) with status, references and sources. With web search (see
 * `WebFindings.ts`), what the search finds joins the document extractions as candidates.
 */
import { type TaskRow, transactionOn } from "@dxs/db"
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
import { extractionConfidence, resultConfidence } from "@dxs/domain/Confidence"
import { groundingAttention } from "@dxs/domain/Resolution"
import { Effect, Option } from "effect"
import { addUsage, LanguageModel, noUsage } from "../../llm/LanguageModel.ts"
import { agentSpec, loadAgents, loadDocuments } from "../ProjectState.ts"
import {
  type AgentPayload,
  commitTask,
  expectedCombinations,
  instanceInputs,
  notFoundText,
  resultName,
  type StageRun,
  type StageShape,
  storedValue,
} from "./Stage.ts"
import { type Candidate, provenance, searchWeb, type WebFinding, WebSearch, webQuery } from "./WebFindings.ts"

type Sources = ResolvedRow["sources"][number]

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
        if (!agent || agent.row.is_draft) return yield* commitTask(ctx, task, p.runId, noUsage)
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
        const checkOf = (id: string) => checked.get(id) ?? { grounded: true, confidence: null }
        const spec = agentSpec(agent.row)
        const webSearch =
          agent.row.agent_type === "extraction" && agent.row.enable_web_search ? configuredSearch : undefined

        // Atomic values first (idempotent), so the model's work below can be keyed by them; with web
        // search, the searches to do are recorded unsearched (the agent's web-search progress counts them).
        const atomics = yield* transactionOn(ctx.db, (trx) =>
          Effect.gen(function* () {
            const made = yield* ensureAtomicValues(
              trx,
              runInfo.projectId,
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
              configVersion,
              searches:
                webSearch === undefined ? [] : out.map((a) => ({ atomicValueId: a.id, query: a.query })),
            })
            return out
          }),
        )

        let usage = noUsage
        const webFindings = new Map<string, ReadonlyArray<WebFinding>>()
        if (webSearch !== undefined)
          for (const atomic of atomics) {
            const r = yield* searchWeb(
              model,
              webSearch,
              { atomicValueId: atomic.id, query: atomic.query, referenceDate: runInfo.referenceDate },
              spec,
            )
            usage = addUsage(usage, r.usage)
            webFindings.set(atomic.id, r.findings)
            yield* markWebSearched(ctx.db, {
              agentId: agent.row.id,
              atomicValueId: atomic.id,
              resultCount: r.hits,
            })
          }

        const rows: Array<ResolvedRow> = []
        for (const atomic of atomics) {
          const name = resultName(agent.row.name, atomic.instances)
          const mine: Array<Candidate> = [
            ...extractions
              .filter(
                (e) =>
                  e.atomic_value_id === atomic.id &&
                  (e.document_id === null || liveDocuments.has(e.document_id)),
              )
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
            ...(webFindings.get(atomic.id) ?? []).map(
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
          const references: Record<string, readonly [string, number | null]> = {}
          const sources = new Map<string, Sources>()
          for (const { candidate: e, documentId, web } of cited) {
            const documentName =
              web !== undefined
                ? web.source.title
                : documentId === null
                  ? "web"
                  : liveDocuments.get(documentId)!.name
            references[e.id] = [documentName, web === undefined ? e.pageNumber : null]
            if (web === undefined && documentId !== null && e.pageNumber !== null) {
              const key = `${documentId}:${e.pageNumber}`
              if (!sources.has(key))
                sources.set(key, {
                  document_name: documentName,
                  page_number: e.pageNumber,
                  document_id: documentId,
                  atomic_value_ids: [atomic.id],
                })
            }
          }
          const noResult = r.value === null || r.status === "No result"
          const origin = noResult ? { sourceType: "document", webSupplement: null } : provenance(cited)
          const { status, justification } = noResult
            ? r
            : groundingAttention(
                r,
                cited.map((c) => checkOf(c.candidate.id)),
              )
          rows.push({
            atomicValueId: atomic.id,
            resultName: name,
            value: noResult ? notFoundText(agent) : storedValue(spec.valueType, r.value),
            status: noResult ? "No result" : status,
            justification,
            references,
            sources: [...sources.values()],
            sourceType: origin.sourceType,
            webSupplement: origin.webSupplement,
            verdicts,
            summary:
              summary === null ? null : atomic.instances.length === 0 ? summary : `${name}: ${summary}`,
            confidence: resultConfidence({
              extractions: candidates.map((c) => ({
                confidence: checkOf(c.id).confidence,
                consistent: consistentById.get(c.id) ?? null,
              })),
              status: noResult ? "No result" : status,
            }),
          })
        }

        yield* commitTask(ctx, task, p.runId, usage, (trx) =>
          Effect.gen(function* () {
            if (!(yield* agentStillAt(trx, agent.row.id, configVersion))) return
            yield* replaceWebExtractions(trx, {
              projectId: runInfo.projectId,
              agentId: agent.row.id,
              configVersion,
              extractions: atomics.flatMap((atomic) =>
                (webFindings.get(atomic.id) ?? []).map((w) => ({ ...w, atomicValueId: atomic.id })),
              ),
            })
            yield* writeResults(trx, {
              projectId: runInfo.projectId,
              agentId: agent.row.id,
              configVersion,
              rows,
              runId: p.runId,
            })
          }),
        )
      })
    return { run } satisfies StageShape
  }),
}) {}
