/**
 * One result: its detail, the extractions behind it, and a person's override or review of it.
 */
import type { Conn } from "@dxs/db"
import { transaction, withDb } from "@dxs/db"
import * as DimensionsRepo from "@dxs/db/repositories/Dimensions"
import * as ResultsRepo from "@dxs/db/repositories/Results"
import { isEmail } from "@dxs/domain/contract/Fields"
import type {
  ExtractionResult,
  ExtractionsPage,
  ResultDetail,
  ResultDimensionInstance,
  ResultOverrideRequest as ResultOverride,
  ResultReviewRequest as ResultReview,
  ResultValue,
} from "@dxs/domain/contract/Result"
import type {
  AgentValueType,
  ExtractionStatus,
  ResolutionStatus,
  ReviewStatus,
  SourceType,
} from "@dxs/domain/Enums"
import { collapseWhitespace, normalizeValue, parseNumber } from "@dxs/domain/Values"
import { Effect } from "effect"
import { CurrentOrganization } from "../CurrentOrganization.ts"
import { NotFound } from "../Errors.ts"
import { loadAgentStates } from "../PipelineState.ts"
import { checkProject } from "../Projects.ts"
import { iso, isoOrNull } from "../Time.ts"
import { checkPage, invalid } from "./Lists.ts"

export const EXTRACTIONS_DEFAULT_LIMIT = 10
export const EXTRACTIONS_MAX_LIMIT = 500

type AgentStates = Effect.Effect.Success<ReturnType<typeof loadAgentStates>>

const stateOf = (
  states: AgentStates,
  agentId: string,
): { readonly extractionStatus: ExtractionStatus; readonly requiresAttention: boolean } =>
  states.get(agentId) ?? { extractionStatus: "Pending", requiresAttention: false }

/** The dimension names of the project now (a dimension may have been renamed since it was resolved). */
const dimensionNames = (db: Conn, projectId: string) =>
  Effect.map(
    DimensionsRepo.dimensionsOfProject(db, projectId),
    (dimensions): ReadonlyMap<string, string> => new Map(dimensions.map((d) => [d.id, d.name])),
  )

const instancesOf = (
  stored: ReadonlyArray<{
    id: string
    dimension_id: string
    name: string
    dimension_value: string
    document_id: string | null
  }>,
  names: ReadonlyMap<string, string>,
): Array<ResultDimensionInstance> =>
  (stored ?? []).map((d) => ({
    id: d.id,
    dimension_id: d.dimension_id,
    dimension_value: d.dimension_value,
    name: names.get(d.dimension_id) ?? d.name,
    document_id: d.document_id ?? null,
  }))

const findResult = (db: Conn, projectId: string, resultId: string) =>
  Effect.flatMap(ResultsRepo.findCurrentResult(db, projectId, resultId), (row) =>
    row ? Effect.succeed(row) : Effect.fail(NotFound.of("Result", resultId)),
  )

const toDetail = (
  r: ResultsRepo.CurrentResultRow,
  state: ReturnType<typeof stateOf>,
  names: ReadonlyMap<string, string>,
): ResultDetail => ({
  id: r.id,
  atomic_value_id: r.atomic_value_id,
  result_name: r.result_name,
  agent_id: r.agent_id,
  agent_name: r.agent_name,
  value_type: r.value_type as AgentValueType,
  unit: r.unit,
  extraction_status: state.extractionStatus,
  requires_attention: state.requiresAttention,
  value: r.presented as ResultValue,
  resolution_status: r.resolution_status as ResolutionStatus,
  justification_for_resolution_status: r.justification,
  references: (r.references ?? {}) as ResultDetail["references"],
  source_type: r.source_type as SourceType,
  is_web_supplement: r.is_web_supplement,
  web_supplement: r.web_supplement ?? null,
  is_overridden: r.is_overridden,
  updated_by_email: r.updated_by_email,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  dimension_instances: instancesOf(r.dimension_values, names),
  sources: (r.sources ?? []).map((s) => ({
    document_name: s.document_name,
    page_number: s.page_number,
    document_id: s.document_id,
    atomic_value_ids: [...s.atomic_value_ids],
  })),
  latest_review_status: r.latest_review_status as ReviewStatus | null,
  latest_review_comment: r.latest_review_comment,
  latest_review_at: isoOrNull(r.latest_review_at),
  latest_review_by: r.latest_review_by,
  confidence: r.confidence,
})

const loadDetail = (db: Conn, projectId: string, resultId: string) =>
  Effect.gen(function* () {
    const row = yield* findResult(db, projectId, resultId)
    const [states, names] = yield* Effect.all(
      [loadAgentStates(db, projectId, [row.agent_id]), dimensionNames(db, projectId)],
      { concurrency: "unbounded" },
    )
    return toDetail(row, stateOf(states, row.agent_id), names)
  })

const checkEmail = (path: string, email: string | null | undefined) =>
  email == null || isEmail(email) ? Effect.void : invalid(path, "must be an e-mail address")

/** The value an override stores, typed for the agent: a JSON number for `number` agents. */
const storedOverride = (valueType: string, value: string | number | null) =>
  Effect.gen(function* () {
    if (value === null) return null
    if (valueType === "number") {
      const n = typeof value === "number" ? value : parseNumber(value)
      if (n === undefined || !Number.isFinite(n))
        return yield* invalid("value", "must be a number for this agent (value_type number)")
      return Number(normalizeValue("number", String(n)))
    }
    const text = typeof value === "number" ? String(value) : collapseWhitespace(value)
    if (text === "") return yield* invalid("value", "must not be empty; send null for no value")
    return normalizeValue(valueType, text)
  })

/** One current result of the project, with its sources, web supplement and review. */
export const detail = (projectId: string, resultId: string) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    return yield* withDb((db) =>
      Effect.gen(function* () {
        yield* checkProject(db, org.id, projectId)
        return yield* loadDetail(db, projectId, resultId)
      }),
    )
  })

/**
 * The extractions behind a result: web ones first, then consistent (true, false, not yet evaluated),
 * then by document name and page.
 */
export const extractions = (
  projectId: string,
  resultId: string,
  page: { readonly limit?: number | undefined; readonly offset?: number | undefined },
) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    const { limit, offset } = yield* checkPage(page.limit, page.offset, {
      limit: EXTRACTIONS_DEFAULT_LIMIT,
      max: EXTRACTIONS_MAX_LIMIT,
    })
    return yield* withDb((db) =>
      Effect.gen(function* () {
        yield* checkProject(db, org.id, projectId)
        const result = yield* findResult(db, projectId, resultId)
        const { total, rows } = yield* ResultsRepo.extractionsOfResult(
          db,
          {
            atomicValueId: result.atomic_value_id,
            agentId: result.agent_id,
            agentConfigVersion: result.agent_config_version,
          },
          { limit, offset },
        )
        return {
          total_count: total,
          data: rows.map(
            (e): ExtractionResult => ({
              id: e.id,
              value: normalizeValue(result.value_type, e.value),
              relevant_passage: e.relevant_passage,
              reasoning: e.reasoning,
              consistent: e.consistent,
              justification_for_consistency: e.justification_for_consistency,
              source_type: e.source_type,
              document_id: e.document_id,
              document_name: e.document_name ?? null,
              page_number: e.page_number,
              extracted_at: iso(e.extracted_at),
              web_search_query: e.web_search_query,
              web_search_timestamp: isoOrNull(e.web_search_timestamp),
              web_citations: (e.web_citations ?? []).map((c) => ({
                snippets: c.snippets.map((s) => ({ text: s.text })),
                source: { url: c.source.url, title: c.source.title },
              })),
              derived_sources: (e.derived_sources ?? []).map((s) => ({
                source_agent_id: s.source_agent_id,
                source_agent_name: s.source_agent_name,
                source_resolution_result_id: s.source_resolution_result_id,
                dimension_values: { ...s.dimension_values },
                resolved_value: s.resolved_value,
              })),
              grounded: e.grounded,
              confidence: e.confidence,
            }),
          ),
        } satisfies ExtractionsPage
      }),
    )
  })

/**
 * Sets a result's value by hand (kept when the same configuration is resolved again). The status
 * defaults to `Resolved`; a `number` agent's value must be a number.
 */
export const override = (projectId: string, resultId: string, input: ResultOverride) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    yield* checkEmail("updated_by_email", input.updated_by_email)
    return yield* transaction((trx) =>
      Effect.gen(function* () {
        yield* checkProject(trx, org.id, projectId)
        const result = yield* findResult(trx, projectId, resultId)
        const value = yield* storedOverride(result.value_type, input.value)
        yield* ResultsRepo.overrideResult(trx, resultId, {
          value,
          resolutionStatus: input.resolution_status ?? "Resolved",
          justification: input.justification_for_resolution_status ?? null,
          // A signed-in member is who set it; an API client may name the person.
          updatedByEmail: org.member?.email ?? input.updated_by_email ?? null,
        })
        return yield* loadDetail(trx, projectId, resultId)
      }),
    )
  })

/**
 * Records a person's review of a result (the latest one is kept): marked correct, a model's value
 * that required attention is `Resolved`; marked wrong, a resolved one requires attention.
 */
export const review = (projectId: string, resultId: string, input: ResultReview) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    yield* checkEmail("reviewed_by", input.reviewed_by)
    return yield* transaction((trx) =>
      Effect.gen(function* () {
        yield* checkProject(trx, org.id, projectId)
        const result = yield* findResult(trx, projectId, resultId)
        const reviewedBy = org.member?.email ?? input.reviewed_by ?? null
        yield* ResultsRepo.recordReview(trx, resultId, {
          status: input.status,
          comment: input.comment ?? "",
          reviewedBy,
        })
        // Marked correct, a value no longer needs attention (in the queue, the grid and the counts);
        // marked wrong, a resolved one does.
        const who = reviewedBy ?? "a reviewer"
        if (input.status === "positive" && result.resolution_status === "Requires attention")
          yield* ResultsRepo.settleByReview(trx, resultId, {
            status: "Resolved",
            justification: `Marked correct by ${who}.`,
          })
        if (input.status === "negative" && result.resolution_status === "Resolved")
          yield* ResultsRepo.settleByReview(trx, resultId, {
            status: "Requires attention",
            justification: `Marked wrong by ${who}.`,
          })
        return yield* loadDetail(trx, projectId, resultId)
      }),
    )
  })
