/**
 * Output schemas (api-v1.md "Output schema record", "Results in schema format", "One-call extraction"):
 * a project's target JSON Schema, the mapping from its agents and dimensions to the schema's fields,
 * automatic generation of agents and mapping in the background, results in the schema's shape, and
 * `POST /extract/`. The rules of mappings live in `@dxs/domain/OutputMapping` and `AutoMapping`.
 */

import { randomUUID } from "node:crypto"
import {
  BlobStore,
  type Conn,
  type Database,
  type TaskRow,
  transaction,
  undoUnlessCommitted,
  withDb,
} from "@dxs/db"
import { enqueue } from "@dxs/db/TaskQueue"
import {
  type ExistingAgent,
  type ExistingDimension,
  type PlannedAgent,
  planAutoMapping,
} from "@dxs/domain/AutoMapping"
import type {
  ExtractResponse as ExtractResponseSchema,
  OutputSchemaRecord as OutputSchemaRecordSchema,
  OutputSchemaRequest,
} from "@dxs/domain/contract/OutputSchema"
import type { MappingStatus } from "@dxs/domain/Enums"
import { enumOf, keywordOf, schemaAt, schemaTypes } from "@dxs/domain/JsonSchema"
import {
  hasMappingErrors,
  type LeafResult,
  type MappingContext,
  type MappingDiagnostic,
  type MappingNode,
  type MissingValue,
  renderSchema,
  validateMapping,
} from "@dxs/domain/OutputMapping"
import {
  type FieldDescription,
  type FieldToDescribe,
  type LanguageModelShape,
  ModelError,
} from "@dxs/pipeline/llm/LanguageModel"
import { requestLaunch } from "@dxs/pipeline/run/Runs"
import { Context, Effect } from "effect"
import { type Kysely, sql, type Transaction } from "kysely"
import { writeAgent } from "./Agents.ts"
import type { BackgroundTaskHandler } from "./Archive.ts"
import { CurrentOrganization } from "./CurrentOrganization.ts"
import { insertDimension, isSystemDimension } from "./Dimensions.ts"
import {
  checkUpload,
  insertUpload,
  placeUpload,
  storeUpload,
  type UploadedFile,
  UploadLimits,
} from "./Documents.ts"
import { BadRequest, Conflict, NotFound, problemType, Unprocessable } from "./Errors.ts"
import { type Answer, claimKey, earlierAnswer, idempotentRequest, rememberKey } from "./Idempotency.ts"
import { validName } from "./Inputs.ts"
import { findLiveProject, findProject, insertProject } from "./Projects.ts"
import { systemDimensionValuesOf } from "./TagDimensions.ts"
import { checkJsonInput, checkTargetSchema, parseJsonInput, targetSchemaCheck } from "./TargetSchema.ts"
import { isoOrNull } from "./Time.ts"

/** Where the web application lives: `_service_url` deep links start with it (config `APP_URL`). */
export class AppUrl extends Context.Reference<AppUrl>()("@dxs/services/AppUrl", {
  defaultValue: () => "http://localhost:8080",
}) {}

/** The most files one `POST /extract/` call may carry (DESIGN §4). */
export const EXTRACT_MAX_FILES = 50
export const EXTRACT_DEFAULT_PROJECT_NAME = "API Extraction"

export const OUTPUT_MAPPING_TASK = "output-mapping"
const mappingTaskKey = (projectId: string, version: number) =>
  `${OUTPUT_MAPPING_TASK}:${projectId}:${version}`

export type { MappingStatus }

/** The output schema record (V1SchemaResponse). */
export type OutputSchemaRecord = typeof OutputSchemaRecordSchema.Type

/** `mapping` `undefined` = omitted. */
export type OutputSchemaPut = OutputSchemaRequest

export interface ExtractRequest {
  readonly files: ReadonlyArray<UploadedFile>
  /** The `schema` form field: a JSON string. */
  readonly schema: string
  readonly project_name?: string | undefined
  readonly auto_map: boolean
}

export type ExtractResponse = typeof ExtractResponseSchema.Type

type ProjectRow = Awaited<ReturnType<typeof projectRow>>

const projectRow = (db: Conn, projectId: string) =>
  db.selectFrom("projects").selectAll().where("id", "=", projectId).executeTakeFirstOrThrow()

const lockedProjectRow = (trx: Conn, projectId: string) =>
  trx.selectFrom("projects").selectAll().where("id", "=", projectId).forUpdate().executeTakeFirstOrThrow()

// ---------------------------------------------------------------------------------------------------------
// The mapping's context: the project's agents and dimensions as a mapping names them

/** Non-draft agents with their dimensions, and every dimension with its current values, in order. */
export const loadMappingContext = async (db: Conn, projectId: string): Promise<MappingContext> => {
  const [agents, attachments, dimensions, resultValues] = await Promise.all([
    db
      .selectFrom("agents")
      .select(["id", "name", "value_type", "value_if_not_found"])
      .where("project_id", "=", projectId)
      .where("is_draft", "=", false)
      .orderBy("created_at")
      .orderBy("id")
      .execute(),
    db
      .selectFrom("agent_dimensions as ad")
      .innerJoin("agents as a", "a.id", "ad.agent_id")
      .innerJoin("dimensions as d", "d.id", "ad.dimension_id")
      .select(["ad.agent_id", "ad.dimension_id", "ad.are_values_dynamic", "ad.values", "d.name"])
      .where("a.project_id", "=", projectId)
      .orderBy("ad.order")
      .orderBy("d.created_at")
      .orderBy("ad.id")
      .execute(),
    db
      .selectFrom("dimensions")
      .select(["id", "name", "source", "tag_key"])
      .where("project_id", "=", projectId)
      .orderBy("created_at")
      .orderBy("id")
      .execute(),
    // Values that results carry (discovered values of dynamic dimensions), in the order they appeared.
    sql<{ dimension_id: string; value: string }>`
      select d.dimension_id, d.value from (
        select dv->>'dimension_id' as dimension_id, dv->>'dimension_value' as value,
               min(av.created_at) as first_at
        from atomic_values av, jsonb_array_elements(av.dimension_values) dv
        where av.project_id = ${projectId}
        group by 1, 2
      ) d order by d.first_at, d.value`
      .execute(db)
      .then((r) => r.rows),
  ])
  const values = new Map<string, Array<string>>()
  const add = (dimensionId: string, value: string) => {
    const list = values.get(dimensionId) ?? []
    if (!list.includes(value)) list.push(value)
    values.set(dimensionId, list)
  }
  const system = await Effect.runPromise(
    systemDimensionValuesOf(
      db,
      dimensions
        .filter((d) => isSystemDimension(d.source))
        .map((d) => ({ dimension_id: d.id, project_id: projectId, source: d.source, tag_key: d.tag_key })),
    ),
  )
  for (const [dimensionId, list] of system) for (const v of list) add(dimensionId, v)
  for (const a of attachments)
    if (!a.are_values_dynamic) for (const v of a.values ?? []) add(a.dimension_id, v)
  for (const r of resultValues) add(r.dimension_id, r.value)
  return {
    agents: agents.map((a) => ({
      name: a.name,
      value_type: a.value_type as MappingContext["agents"][number]["value_type"],
      dimensions: attachments.filter((x) => x.agent_id === a.id).map((x) => x.name),
      value_if_not_found: a.value_if_not_found,
    })),
    dimensions: dimensions.map((d) => ({ name: d.name, values: values.get(d.id) ?? [] })),
  }
}

const toRecord = (row: ProjectRow, context: MappingContext): OutputSchemaRecord => ({
  schema: row.target_output_schema,
  auto_map: row.output_auto_map,
  mapping: row.output_mapping ?? null,
  status: row.output_mapping_status as MappingStatus,
  source: row.output_mapping_source as "llm" | "manual",
  generated_by: row.output_mapping_source === "llm" ? (row.output_mapping_generated_by ?? null) : null,
  error: row.output_mapping_error,
  generated_at: isoOrNull(row.output_mapping_generated_at),
  schema_in_sync: row.output_schema_in_sync,
  diagnostics:
    row.output_mapping === null || row.output_mapping === undefined
      ? []
      : validateMapping(row.target_output_schema, row.output_mapping, context),
})

const noSchema = (projectId: string) =>
  NotFound.of(`Project ${projectId} has no output schema; PUT one to /projects/${projectId}/schema/`)

const sameJson = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b)

const canonicalJson = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    x !== null && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(
          Object.keys(x)
            .sort()
            .map((k) => [k, (x as Record<string, unknown>)[k]]),
        )
      : x,
  )

const describeMissing = (m: MissingValue) => {
  const where = Object.entries(m.dimension_values)
    .map(([dimension, value]) => `${dimension} ${JSON.stringify(value)}`)
    .join(", ")
  return where === "" ? m.message : `(${where}) ${m.message}`
}

/**
 * The results cannot fill the schema validly (a required value nothing can give): said in a 422 rather than
 * answered with a document that does not validate. `errors` lists what is missing (mapping paths).
 */
const unsatisfied = (listed: ReadonlyArray<MissingValue>) =>
  Effect.fail(
    new Unprocessable({
      type: problemType("schema-unsatisfied"),
      title: "Results do not satisfy the schema",
      status: 422,
      detail: `The results cannot fill the project's schema validly: ${listed
        .map((m) => `${m.path === "" ? "(root)" : m.path}: ${describeMissing(m)}`)
        .join(
          "; ",
        )}. Override a result, give the agent a value_if_not_found the field accepts, map the field, or allow null in the schema; ?enrich=true answers with what there is and lists it in _missing.`,
      errors: listed.map((m) => ({ path: m.path, message: describeMissing(m) })),
    }),
  )

const unsaveable = (diagnostics: ReadonlyArray<MappingDiagnostic>) =>
  Unprocessable.of(
    `The mapping has ${diagnostics.filter((d) => d.severity === "error").length} error(s) and was not saved: ${diagnostics
      .filter((d) => d.severity === "error")
      .map((d) => `${d.path === "" ? "(root)" : d.path}: ${d.message}`)
      .join("; ")}`,
    diagnostics,
  )

/**
 * Stores a schema for automatic mapping: the mapping is cleared and a generation task is queued for this
 * schema version (a later PUT makes it a no-op). `launchAfter`: start the pipeline once the mapping is saved.
 */
const setAutoMap = async (
  trx: Transaction<Database>,
  projectId: string,
  schema: unknown,
  launchAfter: boolean,
) => {
  const row = await trx
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
  await enqueue(trx, {
    kind: OUTPUT_MAPPING_TASK,
    idempotencyKey: mappingTaskKey(projectId, row.output_schema_version),
    payload: { project_id: projectId, version: row.output_schema_version },
    projectId,
  })
}

// ---------------------------------------------------------------------------------------------------------
// Automatic mapping (the background task)

/** The planner's agents as the model sees them: their schema position's type, description, format, enum. */
const fieldsToDescribe = (schema: unknown, agents: ReadonlyArray<PlannedAgent>): Array<FieldToDescribe> =>
  agents.map((a) => {
    const position = schemaAt(schema, a.path) ?? {}
    return {
      path: a.path,
      agentName: a.name,
      types: schemaTypes(schema, position),
      description: keywordOf(schema, position, "description") ?? "",
      format: keywordOf(schema, position, "format") ?? "",
      enumValues: (enumOf(schema, position) ?? []).filter((v) => v !== null).map((v) => String(v)),
      dimensions: a.dimensions,
      draft: {
        extractionInstructions: a.extraction_instructions,
        valueType: a.value_type,
        unit: a.unit,
        examples: a.examples,
      },
    }
  })

/**
 * The texts of the agents a plan would create, from the model (the `local` provider keeps the planner's
 * drafts; `openai` writes them in one structured call per 40 fields). Runs outside any transaction.
 */
const describePlannedAgents = async (db: Kysely<Database>, row: ProjectRow, model: LanguageModelShape) => {
  const plan = planAutoMapping(row.target_output_schema, await existingForPlan(db, row.id))
  if (!plan.ok || plan.agents.length === 0) return new Map<string, FieldDescription>()
  const title = keywordOf(row.target_output_schema, row.target_output_schema, "title") ?? ""
  const described = await Effect.runPromise(
    model.describeFields({
      schemaTitle: title,
      fields: fieldsToDescribe(row.target_output_schema, plan.agents),
    }),
  )
  return new Map(described.fields.map((f) => [f.path, f]))
}

const existingForPlan = async (db: Conn, projectId: string) => {
  const [context, dimensionRows] = await Promise.all([
    loadMappingContext(db, projectId),
    db.selectFrom("dimensions").select(["name", "source"]).where("project_id", "=", projectId).execute(),
  ])
  return {
    agents: context.agents.map((a): ExistingAgent => ({ ...a })),
    dimensions: dimensionRows.map(
      (d): ExistingDimension => ({ name: d.name, source: d.source as ExistingDimension["source"] }),
    ),
  }
}

/**
 * Plans agents, dimensions and a mapping from the schema (the model writes the agents' texts first,
 * outside the transaction), then saves them with the mapping in one transaction if the schema version is
 * still the one the task was queued for. A plan the domain refuses (or a mapping that would not
 * validate) leaves the status `failed` with the reason. `launchAfter` projects (`/extract/`) get their
 * run queued in the same transaction.
 */
const generateMapping = async (
  db: Kysely<Database>,
  task: TaskRow,
  model: LanguageModelShape,
  complete: (trx: Transaction<Database>) => Promise<void>,
) => {
  const projectId = String(task.payload.project_id)
  const version = Number(task.payload.version)
  const current = (row: ProjectRow) =>
    row.output_auto_map && row.output_schema_version === version && row.archived_at === null
  const before = await projectRow(db, projectId)
  const descriptions = current(before) ? await describePlannedAgents(db, before, model) : new Map()
  await db.transaction().execute(async (trx) => {
    const row = await lockedProjectRow(trx, projectId)
    if (!current(row)) {
      await complete(trx)
      return
    }
    const outcome = await Effect.runPromise(Effect.either(buildMapping(trx, row, descriptions)))
    if (outcome._tag === "Left") {
      await saveFailure(trx, projectId, outcome.left)
    } else {
      await trx
        .updateTable("projects")
        .set({
          output_mapping: JSON.stringify(outcome.right),
          output_mapping_status: "success",
          output_mapping_source: "llm",
          output_mapping_generated_by: model.name,
          output_mapping_error: null,
          output_mapping_generated_at: sql`now()`,
          output_schema_in_sync: true,
          output_launch_after_mapping: false,
          updated_at: sql`now()`,
        })
        .where("id", "=", projectId)
        .execute()
      if (row.output_launch_after_mapping) await requestLaunch(trx, projectId)
    }
    await complete(trx)
  })
}

const saveFailure = (trx: Conn, projectId: string, error: string) =>
  trx
    .updateTable("projects")
    .set({
      output_mapping_status: "failed",
      output_mapping_error: error,
      output_launch_after_mapping: false,
      updated_at: sql`now()`,
    })
    .where("id", "=", projectId)
    .execute()

const buildMapping = (
  trx: Transaction<Database>,
  row: ProjectRow,
  descriptions: ReadonlyMap<string, FieldDescription>,
) =>
  Effect.gen(function* () {
    const projectId = row.id
    const plan = planAutoMapping(
      row.target_output_schema,
      yield* Effect.promise(() => existingForPlan(trx, projectId)),
    )
    if (!plan.ok) return yield* Effect.fail(plan.error)
    const rows = yield* Effect.promise(() =>
      trx
        .selectFrom("dimensions")
        .select(["id", "name", "source"])
        .where("project_id", "=", projectId)
        .execute(),
    )
    const ids = new Map(rows.map((d) => [d.name, d.id]))
    // System dimensions (the Document dimension) have their values from the documents themselves.
    const system = new Set(rows.filter((d) => isSystemDimension(d.source)).map((d) => d.name))
    for (const d of plan.dimensions) {
      const created = yield* insertDimension(trx, projectId, { ...d }).pipe(
        Effect.mapError((e) => `could not create dimension "${d.name}": ${e.detail}`),
      )
      ids.set(created.name, created.id)
    }
    for (const a of plan.agents) {
      const { path, dimensions, ...fields } = a
      const described = descriptions.get(path)
      yield* writeAgent(
        trx,
        row.organization_id,
        projectId,
        undefined,
        {
          ...fields,
          ...(described === undefined
            ? {}
            : {
                extraction_instructions: described.extractionInstructions,
                value_type: described.valueType,
                unit: described.unit,
                examples: described.examples,
              }),
          dimensions: dimensions.map((name) =>
            system.has(name)
              ? { dimension_id: ids.get(name)! }
              : { dimension_id: ids.get(name)!, are_values_dynamic: true },
          ),
        },
        "create",
      ).pipe(Effect.mapError((e) => `could not create agent "${a.name}": ${e.detail}`))
    }
    const context = yield* Effect.promise(() => loadMappingContext(trx, projectId))
    const diagnostics = validateMapping(row.target_output_schema, plan.mapping, context)
    if (hasMappingErrors(diagnostics))
      return yield* Effect.fail(
        `the generated mapping does not validate: ${diagnostics
          .filter((d) => d.severity === "error")
          .map((d) => `${d.path}: ${d.message}`)
          .join("; ")}`,
      )
    return plan.mapping
  })

/**
 * The `output-mapping` task handler: generation with `model`; its last failed attempt leaves the status
 * `failed` (a model error that is not worth retrying fails at once).
 */
export const outputMappingTaskHandler =
  (model: LanguageModelShape): BackgroundTaskHandler =>
  async (task, ctx) => {
    try {
      await generateMapping(ctx.db, task, model, ctx.complete)
    } catch (e) {
      const retryable = !(e instanceof ModelError) || e.retryable
      if (retryable && task.attempts < task.max_attempts) throw e
      await ctx.db.transaction().execute(async (trx) => {
        const row = await lockedProjectRow(trx, String(task.payload.project_id))
        if (
          row.output_schema_version === Number(task.payload.version) &&
          row.output_mapping_status === "pending"
        )
          await saveFailure(
            trx,
            row.id,
            `automatic mapping failed: ${e instanceof Error ? e.message : String(e)}`,
          )
        await ctx.complete(trx)
      })
    }
  }

/**
 * Housekeeping: a generation whose last attempt died with its worker (no handler left to record it)
 * leaves the status `failed` rather than `pending` forever.
 */
export const failAbandonedMappings = async (db: Kysely<Database>): Promise<number> => {
  const result = await sql`
    update projects p set output_mapping_status = 'failed',
      output_mapping_error = 'automatic mapping failed: ' || coalesce(t.last_error, 'the task failed'),
      output_launch_after_mapping = false, updated_at = now()
    from tasks t
    where t.kind = ${OUTPUT_MAPPING_TASK} and t.status = 'failed'
      and t.idempotency_key = ${OUTPUT_MAPPING_TASK} || ':' || p.id || ':' || p.output_schema_version
      and p.output_auto_map and p.output_mapping_status = 'pending'`.execute(db)
  return Number(result.numAffectedRows ?? 0)
}

// ---------------------------------------------------------------------------------------------------------
// Results in the schema's shape

const dimensionKey = (agentName: string, values: Readonly<Record<string, string>>) =>
  JSON.stringify([agentName, Object.entries(values).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))])

/** Every current result of the project as a lookup by agent name and dimension values. */
const loadLeaves = async (db: Conn, projectId: string, appUrl: string) => {
  const [rows, names] = await Promise.all([
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
    db
      .selectFrom("dimensions")
      .select(["id", "name"])
      .where("project_id", "=", projectId)
      .execute()
      .then((r) => new Map(r.map((d) => [d.id, d.name]))),
  ])
  const leaves = new Map<string, LeafResult>()
  const base = appUrl.replace(/\/+$/, "")
  for (const r of rows) {
    const values: Record<string, string> = {}
    for (const d of r.dimension_values ?? []) values[names.get(d.dimension_id) ?? d.name] = d.dimension_value
    const status = r.resolution_status as LeafResult["status"]
    leaves.set(dimensionKey(r.name, values), {
      value: status === "No result" || r.value === null || r.value === undefined ? null : String(r.value),
      status,
      url: `${base}/projects/${projectId}/agents/${r.agent_id}/${r.id}`,
    })
  }
  return (agentName: string, values: Readonly<Record<string, string>>) =>
    leaves.get(dimensionKey(agentName, values))
}

// ---------------------------------------------------------------------------------------------------------
// The service

export class OutputSchemas extends Effect.Service<OutputSchemas>()("@dxs/services/OutputSchemas", {
  accessors: true,
  succeed: {
    /** The output schema record; 404 when the project has no schema. */
    get: (projectId: string) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        return yield* withDb((db) =>
          Effect.gen(function* () {
            yield* findProject(db, org.id, projectId)
            const row = yield* Effect.promise(() => projectRow(db, projectId))
            if (row.target_output_schema === null) return yield* noSchema(projectId)
            const context = yield* Effect.promise(() => loadMappingContext(db, projectId))
            return toRecord(row, context)
          }),
        )
      }),

    /** PUT schema, per the spec's rules (see the README's "Output schemas"). */
    put: (projectId: string, input: OutputSchemaPut) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        yield* checkTargetSchema(input.schema)
        if (input.mapping !== undefined && input.mapping !== null)
          yield* checkJsonInput(input.mapping, "mapping")
        if (input.auto_map && input.mapping !== undefined && input.mapping !== null)
          return yield* BadRequest.of("mapping must be omitted or null when auto_map is true", [
            { path: "mapping", message: "must be omitted or null when auto_map is true" },
          ])
        return yield* transaction((trx) =>
          Effect.gen(function* () {
            yield* findLiveProject(trx, org.id, projectId)
            const current = yield* Effect.promise(() => lockedProjectRow(trx, projectId))
            const changed =
              current.target_output_schema === null || !sameJson(current.target_output_schema, input.schema)
            // The agents and dimensions a mapping names: read once, the PUT does not change them.
            const context = yield* Effect.promise(() => loadMappingContext(trx, projectId))
            if (input.auto_map) {
              yield* Effect.promise(() => setAutoMap(trx, projectId, input.schema, false))
            } else {
              let fields: Record<string, unknown>
              if (input.mapping === undefined) {
                if (!changed)
                  return yield* BadRequest.of(
                    "mapping is required when the schema is unchanged: send an object to save a mapping or null to clear it",
                    [{ path: "mapping", message: "is required when the schema is unchanged" }],
                  )
                // A new or changed schema: a stored mapping is kept but no longer in sync.
                const kept = current.output_mapping ?? null
                const usable =
                  kept !== null && !hasMappingErrors(validateMapping(input.schema, kept, context))
                fields = {
                  output_mapping_status: usable ? "success" : "pending",
                  output_schema_in_sync: kept === null,
                  ...(current.target_output_schema === null ? { output_mapping_source: "manual" } : {}),
                }
              } else if (input.mapping === null) {
                fields = {
                  output_mapping: null,
                  output_mapping_status: "pending",
                  output_mapping_source: "manual",
                  output_mapping_generated_at: null,
                  output_schema_in_sync: true,
                }
              } else {
                const diagnostics = validateMapping(input.schema, input.mapping, context)
                if (hasMappingErrors(diagnostics)) return yield* unsaveable(diagnostics)
                fields = {
                  output_mapping: JSON.stringify(input.mapping),
                  output_mapping_status: "success",
                  output_mapping_source: "manual",
                  output_mapping_generated_at: sql`now()`,
                  output_schema_in_sync: true,
                }
              }
              yield* Effect.promise(() =>
                trx
                  .updateTable("projects")
                  .set({
                    ...fields,
                    target_output_schema: JSON.stringify(input.schema),
                    output_auto_map: false,
                    output_mapping_error: null,
                    output_launch_after_mapping: false,
                    output_schema_version: sql`output_schema_version + 1`,
                    updated_at: sql`now()`,
                  })
                  .where("id", "=", projectId)
                  .execute(),
              )
            }
            const row = yield* Effect.promise(() => projectRow(trx, projectId))
            return toRecord(row, context)
          }),
        )
      }),

    /**
     * The results as a JSON object in the shape of the project's schema: 400 without a schema, 409 while
     * the mapping is being generated (or none is saved), 422 when generation failed.
     */
    results: (projectId: string, options: { readonly enrich?: boolean | undefined }) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        const appUrl = yield* AppUrl
        return yield* withDb((db) =>
          Effect.gen(function* () {
            yield* findProject(db, org.id, projectId)
            const row = yield* Effect.promise(() => projectRow(db, projectId))
            if (row.target_output_schema === null)
              return yield* BadRequest.of(`Project ${projectId} has no output schema configured`)
            if (row.output_mapping_status === "failed")
              return yield* Unprocessable.of(
                `Automatic mapping generation failed: ${row.output_mapping_error ?? "unknown reason"}`,
              )
            if (row.output_mapping === null || row.output_mapping === undefined)
              return yield* Conflict.of(
                row.output_auto_map
                  ? "The mapping is still being generated; poll the project status until schema_status is success"
                  : "No mapping is saved for the output schema; PUT one with auto_map false, or set auto_map true",
              )
            const [context, lookup] = yield* Effect.promise(() =>
              Promise.all([loadMappingContext(db, projectId), loadLeaves(db, projectId, appUrl)]),
            )
            const enrich = options.enrich ?? false
            const rendered = renderSchema(
              row.target_output_schema,
              row.output_mapping as MappingNode,
              context,
              lookup,
              { enrich, check: targetSchemaCheck(row.target_output_schema) },
            )
            if (!rendered.valid && !enrich) return yield* unsatisfied(rendered.unmet)
            return rendered.value
          }),
        )
      }),

    /**
     * `POST /extract/`: checks everything first (nothing is created for a bad schema, a missing, empty,
     * too large or unsupported file), stores the files, then in one transaction creates the project, its
     * documents and parse tasks and the schema; with `auto_map` the mapping task also launches the pipeline.
     * With an Idempotency-Key, a repeated request gets the first answer again (`replayed`); a different
     * request with the same key is refused (422).
     */
    extract: (input: ExtractRequest, options: { readonly idempotencyKey?: string | undefined } = {}) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        const blobs = yield* BlobStore
        const { maxFileBytes } = yield* UploadLimits
        const name =
          (input.project_name ?? "").trim() === "" ? EXTRACT_DEFAULT_PROJECT_NAME : input.project_name!.trim()
        yield* validName(name, "project_name")
        const schema = yield* parseJsonInput(input.schema, "schema")
        yield* checkTargetSchema(schema)
        if (input.files.length === 0)
          return yield* BadRequest.of("Send at least one file in the multipart field `files`", [
            { path: "files", message: "is missing" },
          ])
        if (input.files.length > EXTRACT_MAX_FILES)
          return yield* BadRequest.of(
            `At most ${EXTRACT_MAX_FILES} files per call (got ${input.files.length})`,
            [{ path: "files", message: `must be at most ${EXTRACT_MAX_FILES} files` }],
          )
        const checked = yield* Effect.forEach(input.files, (f, i) =>
          checkUpload(f, maxFileBytes, `files/${i}`),
        )
        const request = idempotentRequest(org.id, "extract", options.idempotencyKey, [
          checked.map((c) => [c.fileName, c.sha256]),
          input.schema,
          name,
          input.auto_map,
        ])
        const earlier = yield* withDb((db) => earlierAnswer(db, request))
        if (earlier !== undefined) return { ...earlier, body: earlier.body as ExtractResponse }
        const id = randomUUID()
        const stored = checked.map((c) => placeUpload(id, c))
        return yield* undoUnlessCommitted(
          Effect.gen(function* () {
            for (const s of stored) yield* storeUpload(blobs, s)
            return yield* transaction((trx) =>
              Effect.gen(function* () {
                yield* claimKey(trx, request)
                yield* insertProject(trx, org.id, { name }, id)
                for (const s of stored) yield* insertUpload(trx, id, s)
                if (input.auto_map) yield* Effect.promise(() => setAutoMap(trx, id, schema, true))
                else
                  yield* Effect.promise(() =>
                    trx
                      .updateTable("projects")
                      .set({ target_output_schema: JSON.stringify(schema), output_schema_version: 1 })
                      .where("id", "=", id)
                      .execute(),
                  )
                const accepted = {
                  project_id: id,
                  status_url: `/api/v1/projects/${id}/status/`,
                  results_url: `/api/v1/projects/${id}/results/schema/`,
                } satisfies ExtractResponse
                yield* rememberKey(trx, request, 202, accepted)
                return accepted
              }),
            )
          }),
          Effect.forEach(stored, (s) => blobs.remove(s.key), { discard: true }),
        ).pipe(
          Effect.map((body): Answer<ExtractResponse> => ({ status: 202, body, replayed: false })),
          // A request with the same key committed first: this one's files are gone again; its answer is given.
          Effect.catchTag("AnsweredBefore", (e) =>
            Effect.succeed({ status: e.status, body: e.body as ExtractResponse, replayed: true }),
          ),
        )
      }),
  },
}) {}
