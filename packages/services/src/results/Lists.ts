/**
 * The results list and the results grid, paged and filtered in the database.
 */
import { withDb } from "@dxs/db"
import * as ResultsRepo from "@dxs/db/repositories/Results"
import { type ResolutionStatus, ResolutionStatuses } from "@dxs/domain/Enums"
import { Effect, Schema } from "effect"
import { CurrentOrganization } from "../CurrentOrganization.ts"
import { BadRequest, NotFound } from "../Errors.ts"
import { type JsonPage, type JsonPieces, pageLinks, pageStart } from "../Paging.ts"
import { deriveAgentStates } from "../PipelineState.ts"
import { GRID_DEFAULT_LIMIT, GRID_MAX_LIMIT, gridOf, type ResultsGridQuery } from "../ResultsGrid.ts"

export const RESULTS_DEFAULT_LIMIT = 50
export const RESULTS_MAX_LIMIT = 500

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

export const invalid = (path: string, message: string) =>
  BadRequest.of(`${path} ${message}`, [{ path, message }])

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

/**
 * The list's JSON text with each row's extraction status in its slot (`EXTRACTION_STATUS_SLOT`), in
 * pieces: the text between the slots is sliced, not copied (see `JsonPieces`).
 */
export const filledSlots = (json: string, status: (agentId: string) => string): JsonPieces => {
  // Found by `indexOf`, not a regular expression: a page's text is tens of kilobytes, and a regular
  // expression's search through it took twice as long.
  const { opening, agentIdLength } = ResultsRepo.EXTRACTION_STATUS_SLOT
  const pieces: Array<string> = []
  let from = 0
  for (let at = json.indexOf(opening); at >= 0; at = json.indexOf(opening, from)) {
    const id = at + opening.length
    pieces.push(json.slice(from, at), `"extraction_status":"${status(json.slice(id, id + agentIdLength))}"`)
    from = id + agentIdLength + 1
  }
  pieces.push(json.slice(from))
  return pieces
}

export const listPage = (projectId: string, filters: ResultsQuery) =>
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
      !(Number.isFinite(filters.max_confidence) && filters.max_confidence >= 0 && filters.max_confidence <= 1)
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
        const json = filledSlots(page.json, (agentId) => states.get(agentId)?.extractionStatus ?? "Pending")
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
 * (`gridPageBytes` makes the envelope's bytes).
 */
export const gridPage = (projectId: string, query: ResultsGridQuery) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    const page = yield* checkPage(query.limit, query.offset, {
      limit: GRID_DEFAULT_LIMIT,
      max: GRID_MAX_LIMIT,
    })
    return yield* withDb((db) => gridOf(db, org.id, projectId, query, page))
  })
