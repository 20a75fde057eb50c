import { type Kysely, type Migration, Migrator } from "kysely"
import * as m0001 from "./migrations/2026_11_22_0001_foundation.ts"
import * as m0002 from "./migrations/2026_11_22_0002_pages.ts"
import * as m0003 from "./migrations/2026_11_22_0003_pipeline.ts"
import * as m0004 from "./migrations/2026_11_22_0004_web_searches.ts"
import * as m0005 from "./migrations/2026_11_22_0005_webhooks.ts"
import * as m0006 from "./migrations/2026_11_22_0006_output_schemas.ts"
import * as m0007 from "./migrations/2026_11_22_0007_members.ts"
import * as m0008 from "./migrations/2026_11_22_0008_rate_counters.ts"
import * as m0009 from "./migrations/2026_11_25_0001_upload_safety.ts"
import * as m0010 from "./migrations/2026_11_25_0002_progress_notifications.ts"
import * as m0011 from "./migrations/2026_11_25_0003_output_schema_key_order.ts"
import * as m0012 from "./migrations/2026_11_25_0004_mapping_generated_by.ts"
import * as m0013 from "./migrations/2026_11_25_0005_grounding_confidence.ts"
import * as m0014 from "./migrations/2026_11_26_0001_file_edit_jobs.ts"
import * as m0015 from "./migrations/2026_11_26_0002_document_attachments_index.ts"
import * as m0016 from "./migrations/2026_11_26_0003_results_grid.ts"
import * as m0017 from "./migrations/2026_11_27_0001_page_structure.ts"
import * as m0018 from "./migrations/2026_11_29_0001_result_tallies.ts"
import * as m0019 from "./migrations/2026_11_29_0002_review_state.ts"
import * as m0020 from "./migrations/2026_11_29_0003_run_changes.ts"
import * as m0021 from "./migrations/2026_11_29_0004_task_outages.ts"
import * as m0022 from "./migrations/2026_11_29_0005_review_queue.ts"
import * as m0023 from "./migrations/2026_11_29_0006_review_queue_set_counts.ts"
import * as m0024 from "./migrations/2026_11_29_0007_grid_cells.ts"
import * as m0025 from "./migrations/2026_11_29_0008_cheaper_result_writes.ts"
import * as m0026 from "./migrations/2026_11_29_0009_confidence_tallies.ts"
import * as m0027 from "./migrations/2026_11_30_0001_claim_order.ts"
import * as m0028 from "./migrations/2026_11_30_0002_run_unfinished.ts"
import * as m0029 from "./migrations/2026_11_30_0003_project_searches.ts"
import * as m0030 from "./migrations/2026_12_01_0001_agent_project_statistics.ts"
import * as m0031 from "./migrations/2026_12_02_0001_row_tallies_per_row.ts"
import * as m0032 from "./migrations/2026_12_02_0002_review_tallies_per_statement.ts"
import * as m0033 from "./migrations/2026_12_02_0003_search_strings.ts"

// Every migration, in order. Names are frozen once released.
export const migrations: Record<string, Migration> = {
  "2026_11_22_0001_foundation": m0001,
  "2026_11_22_0002_pages": m0002,
  "2026_11_22_0003_pipeline": m0003,
  "2026_11_22_0004_web_searches": m0004,
  "2026_11_22_0005_webhooks": m0005,
  "2026_11_22_0006_output_schemas": m0006,
  "2026_11_22_0007_members": m0007,
  "2026_11_22_0008_rate_counters": m0008,
  "2026_11_25_0001_upload_safety": m0009,
  "2026_11_25_0002_progress_notifications": m0010,
  "2026_11_25_0003_output_schema_key_order": m0011,
  "2026_11_25_0004_mapping_generated_by": m0012,
  "2026_11_25_0005_grounding_confidence": m0013,
  "2026_11_26_0001_file_edit_jobs": m0014,
  "2026_11_26_0002_document_attachments_index": m0015,
  "2026_11_26_0003_results_grid": m0016,
  "2026_11_27_0001_page_structure": m0017,
  "2026_11_29_0001_result_tallies": m0018,
  "2026_11_29_0002_review_state": m0019,
  "2026_11_29_0003_run_changes": m0020,
  "2026_11_29_0004_task_outages": m0021,
  "2026_11_29_0005_review_queue": m0022,
  "2026_11_29_0006_review_queue_set_counts": m0023,
  "2026_11_29_0007_grid_cells": m0024,
  "2026_11_29_0008_cheaper_result_writes": m0025,
  "2026_11_29_0009_confidence_tallies": m0026,
  "2026_11_30_0001_claim_order": m0027,
  "2026_11_30_0002_run_unfinished": m0028,
  "2026_11_30_0003_project_searches": m0029,
  "2026_12_01_0001_agent_project_statistics": m0030,
  "2026_12_02_0001_row_tallies_per_row": m0031,
  "2026_12_02_0002_review_tallies_per_statement": m0032,
  "2026_12_02_0003_search_strings": m0033,
}

export interface MigrationOutcome {
  readonly applied: ReadonlyArray<string>
}

/** Brings the schema up to date. Kysely holds a Postgres advisory lock meanwhile, so many processes may call it at once. */
export const migrateToLatest = async (db: Kysely<any>): Promise<MigrationOutcome> => {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  const { error, results } = await migrator.migrateToLatest()
  if (error) {
    const failed = results?.find((r) => r.status === "Error")
    throw new Error(`migration ${failed?.migrationName ?? "?"} failed: ${String(error)}`, { cause: error })
  }
  return { applied: (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName) }
}

/** The migrations this code knows that the database has not applied (empty: the schema is current). */
export const pendingMigrations = async (db: Kysely<any>): Promise<ReadonlyArray<string>> => {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  return (await migrator.getMigrations()).filter((m) => m.executedAt === undefined).map((m) => m.name)
}
