/** The results grid's records: its sort, filter, rows and cells, and the keys and windows it is paged by. */
import type { ResultSource, StoredDimensionValue } from "../../Schema.ts"
import type { CurrentResultsFilter } from "./CurrentResults.ts"

/** The name of the one row of results that no dimension splits. */
export const ALL_DOCUMENTS = "All documents"

/**
 * The order of the rows: by name, or by one agent's value (numbers numerically, ISO dates of date agents
 * chronologically, other values as text case-insensitively, by their first 200 characters; rows without
 * a value last either way; ties by name).
 */
export type GridSort =
  | { readonly by: "name"; readonly descending: boolean }
  | {
      readonly by: "agent"
      readonly agentId: string
      /** The agent's value type (informative: the database keeps each result's own). */
      readonly valueType: string
      readonly descending: boolean
    }

export interface GridFilter extends CurrentResultsFilter {
  /**
   * In the grid, rows with a cell that has a dimension value containing this (case-insensitively): part of a
   * name is enough. The results list (`CurrentResultsFilter`) keeps its exact match.
   */
  readonly dimensionValue?: string | undefined
  /** Rows with a cell of this document (the document of its Document dimension instance). */
  readonly documentId?: string | undefined
  /** Rows whose name, dimension values or a cell's value contain this (case-insensitively). */
  readonly search?: string | undefined
  /** Rows with a cell whose latest review is this (`none`: never reviewed). */
  readonly reviewStatus?: "none" | "positive" | "negative" | undefined
  /** Rows with a cell whose value is the model's, or one set by hand. */
  readonly source?: "model" | "manual" | undefined
}

export interface GridCell {
  readonly resolution_result_id: string
  readonly agent_id: string
  readonly value: unknown
  readonly resolution_status: string
  readonly confidence: number | null
  readonly is_overridden: boolean
  /** The latest review of the value (`positive`, `negative`, `none`), null when never reviewed. */
  readonly latest_review_status: string | null
  /** Only when asked for (`withSources`); else empty. */
  readonly sources: ReadonlyArray<ResultSource>
}

export interface GridRow {
  /** The row's identity (its combination of dimension instances). */
  readonly key: string
  /** "All documents", or the result name. */
  readonly name: string
  /** The dimension instances of the row (of its oldest agent's result). */
  readonly dimension_values: ReadonlyArray<StoredDimensionValue>
  /** The row's cells, by agent id. */
  readonly cells: ReadonlyMap<string, GridCell>
  /** Where the row stands in the grid's order (for a cursor). */
  readonly position: GridKey
}

/** A row's place in the grid's order: its section (0 with a value to sort by, 1 without), value keys, name keys. */
export type GridKey = readonly [
  section: number,
  rank: number,
  num: string,
  text: string,
  rowRank: number,
  rowSort: string,
  rowExact: string,
  rowHash: string,
]

/** A page from a position: an offset, or the rows after (or before) a row's key at a known offset. */
export type GridWindow =
  | { readonly limit: number; readonly offset: number }
  | {
      readonly limit: number
      readonly after?: GridKey | undefined
      readonly before?: GridKey | undefined
      readonly position: number
    }
