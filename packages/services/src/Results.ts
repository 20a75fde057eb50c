/**
 * Results: the resolved values of a project's agents (one per atomic value), their extractions, manual
 * overrides and reviews, and the two look-ups behind them (an agent's relevant pages, an extraction's
 * place on its page). Only results of an agent's current configuration count; a result of an earlier
 * configuration is gone for the API until the next launch replaces it.
 */

import type { Conn, PageLayoutItem } from "@dxs/db"
import { Db, transaction, withDb } from "@dxs/db"
import * as AgentsRepo from "@dxs/db/repositories/Agents"
import * as DimensionsRepo from "@dxs/db/repositories/Dimensions"
import * as DocumentsRepo from "@dxs/db/repositories/Documents"
import * as PagesRepo from "@dxs/db/repositories/Pages"
import * as ResultsRepo from "@dxs/db/repositories/Results"
import { citedCellBoxes } from "@dxs/domain/CellCitation"
import { isEmail } from "@dxs/domain/contract/Fields"
import type { ResultOverrideRequest, ResultReviewRequest } from "@dxs/domain/contract/Result"
import {
  BoundingBox,
  BoundingBoxesResponse,
  DerivedSource,
  ExtractionResult,
  ExtractionsPage,
  RelevantPagesResponse,
  ResultDetail,
  ResultDimensionInstance,
  ResultReferences,
  ResultRow,
  ResultSource,
  ResultSummary,
  type ResultsGrid,
  ResultsPage,
  ResultValue,
  WebCitation,
  WebSupplement,
} from "@dxs/domain/contract/Result"
import {
  type AgentValueType,
  type ExtractionStatus,
  type ResolutionStatus,
  ResolutionStatuses,
  type ReviewStatus,
  type SourceType,
} from "@dxs/domain/Enums"
import { collapseWhitespace, normalizeValue, parseNumber } from "@dxs/domain/Values"
import { relevantPages as rankPages } from "@dxs/pipeline/retrieval/Retrieval"
import { Context, Effect, Schema } from "effect"
import { CurrentOrganization } from "./CurrentOrganization.ts"
import { BadRequest, NotFound } from "./Errors.ts"
import { type JsonPage, pageLinks, pageStart } from "./Paging.ts"
import { deriveAgentStates, loadAgentStates } from "./PipelineState.ts"
import { checkProject } from "./Projects.ts"
import {
  exportOf,
  GRID_DEFAULT_LIMIT,
  GRID_MAX_LIMIT,
  gridOf,
  type ResultsExportQuery,
  type ResultsGridQuery,
} from "./ResultsGrid.ts"
import { iso, isoOrNull } from "./Time.ts"

// ---------------------------------------------------------------------------------------------------------
// Records: the contract's (api-v1.md "Result row (list) and result detail", "Extraction (V1ExtractionResult)")

export {
  BoundingBox,
  BoundingBoxesResponse,
  DerivedSource,
  ExtractionResult,
  ExtractionsPage,
  RelevantPagesResponse,
  ResultDetail,
  ResultDimensionInstance,
  ResultReferences,
  ResultRow,
  ResultSource,
  ResultSummary,
  ResultsPage,
  ResultValue,
  WebCitation,
  WebSupplement,
}

// ---------------------------------------------------------------------------------------------------------
// Inputs

export const RESULTS_DEFAULT_LIMIT = 50
export const RESULTS_MAX_LIMIT = 500
export const EXTRACTIONS_DEFAULT_LIMIT = 10
export const EXTRACTIONS_MAX_LIMIT = 500
export const RELEVANT_PAGES_DEFAULT_LIMIT = 20
export const RELEVANT_PAGES_MAX_LIMIT = 100

export interface ResultsQuery {
  readonly agent_id?: string | undefined
  readonly resolution_status?: ResolutionStatus | undefined
  /** Rows with a dimension instance of exactly this value. */
  readonly dimension_value?: string | undefined
  /** Rows whose confidence is at or below this (0 to 1), least confident first. */
  readonly max_confidence?: number | undefined
  readonly limit?: number | undefined
  readonly offset?: number | undefined
}

/** The key of a row of the results list, as a cursor carries it. */
const ResultCursorKey = Schema.Struct({
  created: Schema.String.pipe(Schema.pattern(/^-?\d{1,20}$/)),
  agentId: Schema.UUID,
  name: Schema.String.pipe(Schema.maxLength(200)),
  id: Schema.UUID,
  confidence: Schema.optional(Schema.Number),
})

export type ResultOverride = ResultOverrideRequest

export type ResultReview = ResultReviewRequest

export { isEmail }

// ---------------------------------------------------------------------------------------------------------
// Helpers

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

const invalid = (path: string, message: string) => BadRequest.of(`${path} ${message}`, [{ path, message }])

/** A page's `limit` (1…max, default) and `offset` (≥ 0), or 400 naming the bad one. */
export const checkPage = (
  limit: number | undefined,
  offset: number | undefined,
  defaults: { readonly limit: number; readonly max: number },
) =>
  Effect.gen(function* () {
    const l = limit ?? defaults.limit
    const o = offset ?? 0
    if (!Number.isInteger(l) || l < 1 || l > defaults.max)
      return yield* invalid("limit", `must be a whole number from 1 to ${defaults.max}`)
    if (!Number.isInteger(o) || o < 0) return yield* invalid("offset", "must be a whole number of at least 0")
    return { limit: l, offset: o }
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

// ---------------------------------------------------------------------------------------------------------
// Locating a passage on its page

const tokensOf = (text: string): Array<string> =>
  text
    .normalize("NFKC")
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? []

/** Share of the passage's words a partial match must cover to count. */
const PARTIAL_MATCH_SHARE = 0.6

/**
 * The layout items that hold `passage`, as one box per line: the passage's words are matched against the
 * words of consecutive items (case, spacing and punctuation ignored). When the page's words differ a
 * little from the passage, the longest common run of words counts if it covers most of the passage.
 */
export const locatePassage = (passage: string, layout: ReadonlyArray<PageLayoutItem>): Array<BoundingBox> => {
  const want = tokensOf(passage)
  if (want.length === 0 || layout.length === 0) return []
  const flat: Array<{ readonly token: string; readonly item: number }> = []
  layout.forEach((item, i) => {
    for (const token of tokensOf(item.text ?? "")) flat.push({ token, item: i })
  })
  let start = -1
  let length = 0
  for (let i = 0; i + want.length <= flat.length && start < 0; i++) {
    let j = 0
    while (j < want.length && flat[i + j]!.token === want[j]) j++
    if (j === want.length) {
      start = i
      length = want.length
    }
  }
  if (start < 0 && want.length > 1) {
    // Longest common run of words (dynamic programming over two rolling rows).
    let previous = new Array<number>(want.length + 1).fill(0)
    for (let i = 1; i <= flat.length; i++) {
      const current = new Array<number>(want.length + 1).fill(0)
      for (let j = 1; j <= want.length; j++) {
        if (flat[i - 1]!.token !== want[j - 1]) continue
        current[j] = previous[j - 1]! + 1
        if (current[j]! > length) {
          length = current[j]!
          start = i - length
        }
      }
      previous = current
    }
    if (length < Math.max(2, Math.ceil(want.length * PARTIAL_MATCH_SHARE))) return []
  }
  if (start < 0) return []
  const items = [...new Set(flat.slice(start, start + length).map((t) => t.item))].map((i) => layout[i]!)
  const boxes: Array<BoundingBox> = []
  for (const item of items) {
    const last = boxes[boxes.length - 1]
    const sameLine =
      last !== undefined &&
      Math.abs(last.y + last.height / 2 - (item.y + item.height / 2)) <=
        Math.max(last.height, item.height) / 2
    if (last !== undefined && sameLine) {
      const x = Math.min(last.x, item.x)
      const y = Math.min(last.y, item.y)
      boxes[boxes.length - 1] = {
        x,
        y,
        width: Math.max(last.x + last.width, item.x + item.width) - x,
        height: Math.max(last.y + last.height, item.y + item.height) - y,
        text: `${last.text} ${item.text}`,
      }
    } else boxes.push({ x: item.x, y: item.y, width: item.width, height: item.height, text: item.text })
  }
  return boxes
}

/** The bounding boxes of these extractions (their rows, then the pages they cite, at once); absent: not found. */
const boxesOf = (db: Conn, rows: ReadonlyArray<ResultsRepo.ExtractionPassage>) =>
  Effect.map(
    PagesRepo.pageLayouts(
      db,
      rows.flatMap((r) =>
        r.document_id !== null && r.page_number !== null
          ? [{ documentId: r.document_id, pageNumber: r.page_number }]
          : [],
      ),
    ),
    (pages) => {
      const pageOf = new Map(pages.map((p) => [`${p.document_id}/${p.number}`, p]))
      return new Map(
        rows.map((e): [string, BoundingBoxesResponse] => {
          const nowhere: BoundingBoxesResponse = {
            extraction_id: e.id,
            document_id: e.document_id,
            page_number: e.page_number,
            page_width: null,
            page_height: null,
            unit: null,
            boxes: [],
          }
          const page = pageOf.get(`${e.document_id}/${e.page_number}`)
          if (e.document_id === null || e.page_number === null || !page) return [e.id, nowhere]
          return [
            e.id,
            {
              ...nowhere,
              page_width: page.width,
              page_height: page.height,
              unit: page.unit,
              // A value from a table cell is shown by its cell.
              boxes:
                citedCellBoxes(e.relevant_passage, e.value, page.tables) ??
                locatePassage(e.relevant_passage, page.layout ?? []),
            },
          ]
        }),
      )
    },
  )

// ---------------------------------------------------------------------------------------------------------
// The service

export class Results extends Effect.Service<Results>()("@dxs/services/Results", {
  effect: Effect.gen(function* () {
    const storage = Context.make(Db, yield* Db)
    const provide = Effect.provide(storage)
    const listPage = (projectId: string, filters: ResultsQuery) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        const { limit, offset } = yield* checkPage(filters.limit, filters.offset, {
          limit: RESULTS_DEFAULT_LIMIT,
          max: RESULTS_MAX_LIMIT,
        })
        const start = yield* pageStart(ResultCursorKey, filters)
        if (
          filters.resolution_status !== undefined &&
          !(ResolutionStatuses as ReadonlyArray<string>).includes(filters.resolution_status)
        )
          return yield* invalid("resolution_status", `must be one of ${ResolutionStatuses.join(", ")}`)
        if (
          filters.max_confidence !== undefined &&
          !(
            Number.isFinite(filters.max_confidence) &&
            filters.max_confidence >= 0 &&
            filters.max_confidence <= 1
          )
        )
          return yield* invalid("max_confidence", "must be a number from 0 to 1")
        return yield* withDb((db) =>
          Effect.gen(function* () {
            const filter: ResultsRepo.CurrentResultsFilter = {
              agentId: filters.agent_id,
              resolutionStatus: filters.resolution_status,
              dimensionValue: filters.dimension_value,
              maxConfidence: filters.max_confidence,
            }
            // One statement whatever the page's size: the project's ownership, the count, the page built as
            // JSON by the database, and the state inputs of the page's agents, whose statuses go in its slots.
            const page = yield* ResultsRepo.resultsListPage(
              db,
              org.id,
              projectId,
              filter,
              start === undefined ? { limit, offset } : { limit, ...start },
            )
            if (!page.found) return yield* NotFound.of("Project", projectId)
            const states = deriveAgentStates(page.states)
            const json = page.json.replace(
              ResultsRepo.EXTRACTION_STATUS_SLOT,
              (_, agentId: string) =>
                `"extraction_status":"${states.get(agentId)?.extractionStatus ?? "Pending"}"`,
            )
            const count = page.count
            return {
              count,
              ...pageLinks(
                [
                  ["agent_id", filters.agent_id],
                  ["resolution_status", filters.resolution_status],
                  ["dimension_value", filters.dimension_value],
                  ["max_confidence", filters.max_confidence],
                ],
                { count, limit, offset: page.offset, rows: page.rows, first: page.first, last: page.last },
              ),
              resultsJson: json,
            } satisfies JsonPage
          }),
        )
      })

    /**
     * The results grid (beyond the contract): one row per combination of dimension values, one column per
     * agent (oldest first), sorted, filtered and paged in the database, its rows built as JSON there
     * (`gridPageText` makes the envelope's text).
     */
    const gridPage = (projectId: string, query: ResultsGridQuery) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        const page = yield* checkPage(query.limit, query.offset, {
          limit: GRID_DEFAULT_LIMIT,
          max: GRID_MAX_LIMIT,
        })
        return yield* withDb((db) => gridOf(db, org.id, projectId, query, page))
      })

    return {
      /**
       * The project's current results, by agent (oldest first) then result name, filtered and paginated
       * (with `max_confidence`, those at or below it, least confident first); `next`/`previous` are relative
       * links keeping the filters. The rows come as the API's JSON, built by the database (`jsonPageText`
       * makes the envelope's text).
       */
      listPage: (projectId: string, filters: ResultsQuery) => listPage(projectId, filters).pipe(provide),

      /** `listPage`, its rows as records. */
      list: (projectId: string, filters: ResultsQuery) =>
        Effect.map(
          listPage(projectId, filters),
          ({ resultsJson, ...links }): ResultsPage => ({ ...links, results: JSON.parse(resultsJson) }),
        ).pipe(provide),

      gridPage: (projectId: string, query: ResultsGridQuery) => gridPage(projectId, query).pipe(provide),

      /** `gridPage`, its rows as records. */
      grid: (projectId: string, query: ResultsGridQuery) =>
        Effect.map(
          gridPage(projectId, query),
          ({ rowsJson, ...rest }): ResultsGrid => ({ ...rest, rows: JSON.parse(rowsJson) }),
        ).pipe(provide),

      /**
       * The grid as a CSV or XLSX file (beyond the contract), with the grid's filters and sort: its name,
       * type and a stream of its bytes, read from the database batch by batch as the stream is pulled (the
       * first batch already read, so the stream lives in the caller's scope: the request's).
       */
      export: (projectId: string, query: ResultsExportQuery) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          return yield* withDb((db) => exportOf(db, org.id, projectId, query))
        }).pipe(provide),

      /** One current result of the project, with its sources, web supplement and review. */
      detail: (projectId: string, resultId: string) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          return yield* withDb((db) =>
            Effect.gen(function* () {
              yield* checkProject(db, org.id, projectId)
              return yield* loadDetail(db, projectId, resultId)
            }),
          )
        }).pipe(provide),

      /**
       * The extractions behind a result: web ones first, then consistent (true, false, not yet evaluated),
       * then by document name and page.
       */
      extractions: (
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
        }).pipe(provide),

      /**
       * Sets a result's value by hand (kept when the same configuration is resolved again). The status
       * defaults to `Resolved`; a `number` agent's value must be a number.
       */
      override: (projectId: string, resultId: string, input: ResultOverride) =>
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
        }).pipe(provide),

      /**
       * Records a person's review of a result (the latest one is kept): marked correct, a model's value
       * that required attention is `Resolved`; marked wrong, a resolved one requires attention.
       */
      review: (projectId: string, resultId: string, input: ResultReview) =>
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
        }).pipe(provide),

      /** The pages of the project's live processed documents that match the agent's key terms, best first. */
      relevantPages: (
        projectId: string,
        agentId: string,
        options: { readonly document_id?: string | undefined; readonly limit?: number | undefined },
      ) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          const limit = options.limit ?? RELEVANT_PAGES_DEFAULT_LIMIT
          if (!Number.isInteger(limit) || limit < 1 || limit > RELEVANT_PAGES_MAX_LIMIT)
            return yield* invalid("limit", `must be a whole number from 1 to ${RELEVANT_PAGES_MAX_LIMIT}`)
          return yield* withDb((db) =>
            Effect.gen(function* () {
              yield* checkProject(db, org.id, projectId)
              const agent = yield* AgentsRepo.findAgent(db, projectId, agentId)
              if (!agent) return yield* NotFound.of("Agent", agentId)
              if (options.document_id !== undefined) {
                const documentId = options.document_id
                const document = yield* DocumentsRepo.findDocumentInProject(db, projectId, documentId)
                if (!document) return yield* NotFound.of("Document", documentId)
              }
              const pages = yield* rankPages(db, {
                projectId,
                agent: {
                  name: agent.name,
                  extractionInstructions: agent.extraction_instructions,
                  examples: agent.examples,
                },
                documentId: options.document_id,
                limit,
              })
              return {
                agent_id: agentId,
                pages: pages.map((p) => ({
                  document_id: p.documentId,
                  document_name: p.documentName,
                  page_number: p.pageNumber,
                  score: p.score,
                  snippet: p.snippet,
                })),
              } satisfies RelevantPagesResponse
            }),
          )
        }).pipe(provide),

      /** Where an extraction's passage is on its page: boxes around the layout items that hold it. */
      boundingBoxes: (projectId: string, extractionId: string) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          return yield* withDb((db) =>
            Effect.gen(function* () {
              yield* checkProject(db, org.id, projectId)
              const boxes = yield* boxesOf(
                db,
                yield* ResultsRepo.extractionPassages(db, [extractionId], { projectId }),
              )
              const found = boxes.get(extractionId)
              if (!found) return yield* NotFound.of("Extraction", extractionId)
              return found
            }),
          )
        }).pipe(provide),

      /** `boundingBoxes` of several extractions of the organisation at once (two statements); absent: not its. */
      boundingBoxesFor: (extractionIds: ReadonlyArray<string>) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          if (extractionIds.length === 0) return new Map<string, BoundingBoxesResponse>()
          return yield* withDb((db) =>
            Effect.flatMap(
              ResultsRepo.extractionPassages(db, extractionIds, { organizationId: org.id }),
              (rows) => boxesOf(db, rows),
            ),
          )
        }).pipe(provide),
    }
  }),
}) {}
