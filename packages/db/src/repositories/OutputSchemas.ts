/**
 * A project's output schema: its target JSON Schema and the mapping onto it, kept in the project's
 * `output_*` columns, with the background task that generates a mapping; and the current results that a
 * mapping renders.
 */
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../Db.ts"
import type { ProjectRow } from "../Schema.ts"
import { enqueue } from "../TaskQueue.ts"
import { outputMappingTaskKey as mappingTaskKey, OUTPUT_MAPPING_TASK } from "./TaskKinds.ts"

// One generation task per schema version (a later PUT makes an earlier task a no-op): the catalogue's key.
export { OUTPUT_MAPPING_TASK, outputMappingTaskKey as mappingTaskKey } from "./TaskKinds.ts"
export type { ProjectRow }

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

/** The project's row with its output schema columns (the project is known to exist); `lock` for an update. */
export const outputSchemaOf = (db: Conn, projectId: string, lock = false): Effect.Effect<ProjectRow> =>
  run(() => {
    const q = db.selectFrom("projects").selectAll().where("id", "=", projectId)
    return (lock ? q.forUpdate() : q).executeTakeFirstOrThrow()
  })

/**
 * Stores a schema for automatic mapping: the mapping is cleared and a generation task is queued for this
 * schema version. `launchAfter`: start the pipeline once the mapping is saved.
 */
export const requestAutoMapping = (db: Conn, projectId: string, schema: unknown, launchAfter: boolean) =>
  run(async () => {
    const row = await db
      .updateTable("projects")
      .set({
        target_output_schema: JSON.stringify(schema),
        output_auto_map: true,
        output_mapping: null,
        output_mapping_status: "pending",
        output_mapping_source: "llm",
        output_mapping_error: null,
        output_mapping_generated_at: null,
        output_schema_in_sync: true,
        output_schema_version: sql`output_schema_version + 1`,
        output_launch_after_mapping: launchAfter,
        updated_at: sql`now()`,
      })
      .where("id", "=", projectId)
      .returning("output_schema_version")
      .executeTakeFirstOrThrow()
    await enqueue(db, {
      kind: OUTPUT_MAPPING_TASK,
      idempotencyKey: mappingTaskKey(projectId, row.output_schema_version),
      payload: { project_id: projectId, version: row.output_schema_version },
      projectId,
    })
  })

/** What a schema stored without automatic mapping does to the mapping. */
export type ManualMapping =
  /** The stored mapping stays; `usable`: it validates against the new schema. `first`: no schema before. */
  | { readonly _tag: "Kept"; readonly usable: boolean; readonly inSync: boolean; readonly first: boolean }
  | { readonly _tag: "Cleared" }
  | { readonly _tag: "Saved"; readonly mapping: unknown }

const manualMappingColumns = (mapping: ManualMapping) => {
  switch (mapping._tag) {
    case "Kept":
      return {
        output_mapping_status: mapping.usable ? "success" : "pending",
        output_schema_in_sync: mapping.inSync,
        ...(mapping.first ? { output_mapping_source: "manual" } : {}),
      }
    case "Cleared":
      return {
        output_mapping: null,
        output_mapping_status: "pending",
        output_mapping_source: "manual",
        output_mapping_generated_at: null,
        output_schema_in_sync: true,
      }
    case "Saved":
      return {
        output_mapping: JSON.stringify(mapping.mapping),
        output_mapping_status: "success",
        output_mapping_source: "manual",
        output_mapping_generated_at: sql<Date>`now()`,
        output_schema_in_sync: true,
      }
  }
}

/** Stores a schema without automatic mapping (a new schema version). */
export const saveManualSchema = (db: Conn, projectId: string, schema: unknown, mapping: ManualMapping) =>
  run(() =>
    db
      .updateTable("projects")
      .set({
        ...manualMappingColumns(mapping),
        target_output_schema: JSON.stringify(schema),
        output_auto_map: false,
        output_mapping_error: null,
        output_launch_after_mapping: false,
        output_schema_version: sql`output_schema_version + 1`,
        updated_at: sql`now()`,
      })
      .where("id", "=", projectId)
      .execute(),
  ).pipe(Effect.asVoid)

/** The schema of a project just created (`POST /extract/` without automatic mapping): its first version. */
export const setInitialSchema = (db: Conn, projectId: string, schema: unknown) =>
  run(() =>
    db
      .updateTable("projects")
      .set({ target_output_schema: JSON.stringify(schema), output_schema_version: 1 })
      .where("id", "=", projectId)
      .execute(),
  ).pipe(Effect.asVoid)

/** Saves a generated mapping, by the language model `generatedBy`. */
export const saveGeneratedMapping = (db: Conn, projectId: string, mapping: unknown, generatedBy: string) =>
  run(() =>
    db
      .updateTable("projects")
      .set({
        output_mapping: JSON.stringify(mapping),
        output_mapping_status: "success",
        output_mapping_source: "llm",
        output_mapping_generated_by: generatedBy,
        output_mapping_error: null,
        output_mapping_generated_at: sql`now()`,
        output_schema_in_sync: true,
        output_launch_after_mapping: false,
        updated_at: sql`now()`,
      })
      .where("id", "=", projectId)
      .execute(),
  ).pipe(Effect.asVoid)

export const saveMappingFailure = (db: Conn, projectId: string, error: string) =>
  run(() =>
    db
      .updateTable("projects")
      .set({
        output_mapping_status: "failed",
        output_mapping_error: error,
        output_launch_after_mapping: false,
        updated_at: sql`now()`,
      })
      .where("id", "=", projectId)
      .execute(),
  ).pipe(Effect.asVoid)

/**
 * A generation whose last attempt died with its worker (no handler left to record it) leaves the status
 * `failed` rather than `pending` forever. The number of projects changed.
 */
export const failAbandonedMappings = (db: Conn): Effect.Effect<number> =>
  run(async () => {
    const result = await sql`
      update projects p set output_mapping_status = 'failed',
        output_mapping_error = 'automatic mapping failed: ' || coalesce(t.last_error, 'the task failed'),
        output_launch_after_mapping = false, updated_at = now()
      from tasks t
      where t.kind = ${OUTPUT_MAPPING_TASK} and t.status = 'failed'
        and t.idempotency_key = ${OUTPUT_MAPPING_TASK} || ':' || p.id || ':' || p.output_schema_version
        and p.output_auto_map and p.output_mapping_status = 'pending'`.execute(db)
    return Number(result.numAffectedRows ?? 0)
  })

/** The project's current results (at their agent's config version) of agents that are not drafts. */
export const currentResults = (db: Conn, projectId: string) =>
  run(() =>
    db
      .selectFrom("resolution_results as rr")
      .innerJoin("agents as a", (j) =>
        j.onRef("a.id", "=", "rr.agent_id").onRef("a.config_version", "=", "rr.agent_config_version"),
      )
      .innerJoin("atomic_values as av", "av.id", "rr.atomic_value_id")
      .select(["rr.id", "rr.agent_id", "rr.value", "rr.resolution_status", "a.name", "av.dimension_values"])
      .where("rr.project_id", "=", projectId)
      .where("a.is_draft", "=", false)
      .execute(),
  )
