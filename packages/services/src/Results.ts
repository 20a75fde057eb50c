/**
 * Results: the resolved values of a project's agents (one per atomic value), their extractions, manual
 * overrides and reviews, and the two look-ups behind them (an agent's relevant pages, an extraction's
 * place on its page). Only results of an agent's current configuration count; a result of an earlier
 * configuration is gone for the API until the next launch replaces it.
 */
import { Db, withDb } from "@dxs/db"
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
import { Context, Effect } from "effect"
import { CurrentOrganization } from "./CurrentOrganization.ts"
import { exportOf, type ResultsExportQuery, type ResultsGridQuery } from "./ResultsGrid.ts"
import { detail, extractions, override, review } from "./results/Detail.ts"
import { gridPage, listPage, type ResultsQuery } from "./results/Lists.ts"
import { boundingBoxes, boundingBoxesFor, relevantPages } from "./results/Passages.ts"
import { type ReviewQueueQuery, reviewQueue } from "./results/ReviewQueue.ts"

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

export { EXTRACTIONS_DEFAULT_LIMIT, EXTRACTIONS_MAX_LIMIT } from "./results/Detail.ts"
export { checkPage, RESULTS_DEFAULT_LIMIT, RESULTS_MAX_LIMIT, type ResultsQuery } from "./results/Lists.ts"
export { locatePassage, RELEVANT_PAGES_DEFAULT_LIMIT, RELEVANT_PAGES_MAX_LIMIT } from "./results/Passages.ts"
export {
  REVIEW_QUEUE_DEFAULT_LIMIT,
  REVIEW_QUEUE_MAX_LIMIT,
  type ReviewQueueQuery,
} from "./results/ReviewQueue.ts"

export type ResultOverride = ResultOverrideRequest

export type ResultReview = ResultReviewRequest

export { isEmail }

// ---------------------------------------------------------------------------------------------------------
// The service: each use-case (results/) with the database the service was built over.

export class Results extends Effect.Service<Results>()("@dxs/services/Results", {
  effect: Effect.gen(function* () {
    const provide = Effect.provide(Context.make(Db, yield* Db))
    return {
      /**
       * The project's current results, by agent (oldest first) then result name, filtered and paginated
       * (with `max_confidence`, those at or below it, least confident first); `next`/`previous` are relative
       * links keeping the filters. The rows come as the API's JSON, built by the database (`jsonPageBytes`
       * makes the envelope's bytes).
       */
      listPage: (projectId: string, filters: ResultsQuery) => listPage(projectId, filters).pipe(provide),

      /** `listPage`, its rows as records. */
      list: (projectId: string, filters: ResultsQuery) =>
        Effect.map(
          listPage(projectId, filters),
          ({ resultsJson, ...links }): ResultsPage => ({
            ...links,
            results: JSON.parse(resultsJson.join("")),
          }),
        ).pipe(provide),

      gridPage: (projectId: string, query: ResultsGridQuery) => gridPage(projectId, query).pipe(provide),

      /** `gridPage`, its rows as records. */
      grid: (projectId: string, query: ResultsGridQuery) =>
        Effect.map(
          gridPage(projectId, query),
          ({ rowsJson, ...rest }): ResultsGrid => ({ ...rest, rows: rowsJson.map((row) => JSON.parse(row)) }),
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

      /**
       * The review queue (beyond the contract): the project's documents with current values, those with a
       * value requiring attention first, then the least confident first, with the project's totals.
       */
      reviewQueue: (projectId: string, query: ReviewQueueQuery) =>
        reviewQueue(projectId, query).pipe(provide),

      /** One current result of the project, with its sources, web supplement and review. */
      detail: (projectId: string, resultId: string) => detail(projectId, resultId).pipe(provide),

      /**
       * The extractions behind a result: web ones first, then consistent (true, false, not yet evaluated),
       * then by document name and page.
       */
      extractions: (
        projectId: string,
        resultId: string,
        page: { readonly limit?: number | undefined; readonly offset?: number | undefined },
      ) => extractions(projectId, resultId, page).pipe(provide),

      /**
       * Sets a result's value by hand (kept when the same configuration is resolved again). The status
       * defaults to `Resolved`; a `number` agent's value must be a number.
       */
      override: (projectId: string, resultId: string, input: ResultOverride) =>
        override(projectId, resultId, input).pipe(provide),

      /**
       * Records a person's review of a result (the latest one is kept): marked correct, a model's value
       * that required attention is `Resolved`; marked wrong, a resolved one requires attention.
       */
      review: (projectId: string, resultId: string, input: ResultReview) =>
        review(projectId, resultId, input).pipe(provide),

      /** The pages of the project's live processed documents that match the agent's key terms, best first. */
      relevantPages: (
        projectId: string,
        agentId: string,
        options: { readonly document_id?: string | undefined; readonly limit?: number | undefined },
      ) => relevantPages(projectId, agentId, options).pipe(provide),

      /** Where an extraction's passage is on its page: boxes around the layout items that hold it. */
      boundingBoxes: (projectId: string, extractionId: string) =>
        boundingBoxes(projectId, extractionId).pipe(provide),

      /** `boundingBoxes` of several extractions of the organisation at once (two statements); absent: not its. */
      boundingBoxesFor: (extractionIds: ReadonlyArray<string>) =>
        boundingBoxesFor(extractionIds).pipe(provide),
    }
  }),
}) {}
