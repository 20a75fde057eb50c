/** The tallies kept by the writes that change them (in the same transaction), so that reads never count a project. */
import type { ColumnType, GeneratedAlways } from "kysely"

/** Current results per agent and resolution status, kept by the results' writes. */
export interface ResultTalliesTable {
  agent_id: string
  resolution_status: string
  n: number
}

/** Current results with a confidence per agent and band of it (`floor(confidence * 100)`), kept by the writes. */
export interface ResultConfidenceTalliesTable {
  agent_id: string
  band: number
  n: number
}

/** The results grid's rows (combinations with at least one current result), their cells counted by status. */
export interface ResultRowsTable {
  project_id: string
  row_hash: string
  row_name: string
  dimension_key: string
  cells: number
  resolved: number
  requires_attention: number
  not_resolved: number
  ignored: number
  no_result: number
  row_rank: GeneratedAlways<number>
  row_sort: GeneratedAlways<string>
  row_exact: GeneratedAlways<string>
}

/** Per project: the grid's rows, and rows with a cell of each status. */
export interface ResultRowTalliesTable {
  project_id: string
  rows: number
  resolved: number
  requires_attention: number
  not_resolved: number
  ignored: number
  no_result: number
}

/** Extraction pairs that count for progress, per agent, config version, dimensions key and slot. */
export interface PairTalliesTable {
  agent_id: string
  agent_config_version: number
  dimensions_key: string
  slot: number
  n: number
}

/** Documents per project, status, attachment or not, live or not, and slot. */
export interface DocumentTalliesTable {
  project_id: string
  status: string
  is_attachment: boolean
  is_live: boolean
  slot: number
  n: number
}

/** Web searches per agent and config version: recorded, and done. */
export interface WebSearchTalliesTable {
  agent_id: string
  agent_config_version: number
  total: number
  done: number
}

/** The model usage of a run, summed per slot as its tasks record it. */
export interface RunUsageTable {
  run_id: string
  slot: number
  requests: ColumnType<string, number | string, number | string>
  cache_hits: ColumnType<string, number | string, number | string>
  input_tokens: ColumnType<string, number | string, number | string>
  cached_input_tokens: ColumnType<string, number | string, number | string>
  output_tokens: ColumnType<string, number | string, number | string>
}

/** The review queue: a document with current results, its values counted and its least confidence. */
export interface ReviewDocumentsTable {
  project_id: string
  document_id: string
  values: number
  /** Values with a review (positive or negative) or a value set by hand. */
  reviewed: number
  requires_attention: number
  min_confidence: number | null
  /** 0 when a value requires attention, else 1: the queue's first key. */
  queue_rank: GeneratedAlways<number>
  /** The least confidence, 2 when no value has one: the queue's second key. */
  queue_confidence: GeneratedAlways<number>
}

/** Per project and slot: the review queue's documents, and those whose every value is reviewed (summed). */
export interface ReviewTalliesTable {
  project_id: string
  slot: number
  documents: number
  reviewed: number
}

/**
 * The parts of a project's search texts (a row's name, a dimension value, a value; lower-cased), once each,
 * added by the writes of results: what a search's trigrams are read from (migration
 * `2026_12_02_0003_search_strings`).
 */
export interface SearchStringsTable {
  project_id: string
  /** md5 of the text, as a uuid: what results keep in `search_keys`. */
  key: string
  text: string
}
