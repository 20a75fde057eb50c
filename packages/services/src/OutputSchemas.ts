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
  Db,
  type ProjectRow,
  type TaskRow,
  transaction,
  undoUnlessCommitted,
  withDb,
} from "@dxs/db"
import { outageOf } from "@dxs/db/Outage"
import * as AgentsRepo from "@dxs/db/repositories/Agents"
import * as DimensionsRepo from "@dxs/db/repositories/Dimensions"
import * as OutputSchemasRepo from "@dxs/db/repositories/OutputSchemas"
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
import type { Kysely, Transaction } from "kysely"
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
import { RequestLimits } from "./HttpLimits.ts"
import { type Answer, claimKey, earlierAnswer, idempotentRequest, rememberKey } from "./Idempotency.ts"
import { validName } from "./Inputs.ts"
import { checkLiveProject, checkProject, insertProject } from "./Projects.ts"
import { checkJsonInput, checkTargetSchema, parseJsonInput, targetSchemaCheck } from "./TargetSchema.ts"
import { isoOrNull } from "./Time.ts"

/** Where the web application lives: `_service_url` deep links start with it (config `APP_URL`). */
export class AppUrl extends Context.Reference<AppUrl>()("@dxs/services/AppUrl", {
  defaultValue: () => "http://localhost:8080",
}) {}

/** The most files one `POST /extract/` call may carry (DESIGN §4). */
export const EXTRACT_MAX_FILES = 50
export const EXTRACT_DEFAULT_PROJECT_NAME = "API Extraction"

export const OUTPUT_MAPPING_TASK = OutputSchemasRepo.OUTPUT_MAPPING_TASK

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

// ---------------------------------------------------------------------------------------------------------
// The mapping's context: the project's agents and dimensions as a mapping names them

/** Non-draft agents with their dimensions, and every dimension with its current values, in order. */
export const loadMappingContext = (db: Conn, projectId: string): Effect.Effect<MappingContext> =>
  Effect.gen(function* () {
    const [agents, attachments, dimensions, resultValues] = yield* Effect.all(
      [
        AgentsRepo.publishedAgentsOfProject(db, projectId),
        AgentsRepo.attachmentsOf(db, { projectId }),
        DimensionsRepo.dimensionsOfProject(db, projectId),
        // Values that results carry (discovered values of dynamic dimensions), in the order they appeared.
        DimensionsRepo.valuesInResults(db, projectId),
      ],
      { concurrency: "unbounded" },
    )
    const values = new Map<string, Array<string>>()
    const add = (dimensionId: string, value: string) => {
      const list = values.get(dimensionId) ?? []
      if (!list.includes(value)) list.push(value)
      values.set(dimensionId, list)
    }
    const system = yield* DimensionsRepo.systemDimensionValues(
      db,
      dimensions
        .filter((d) => isSystemDimension(d.source))
        .map((d) => ({ dimension_id: d.id, project_id: projectId, source: d.source, tag_key: d.tag_key })),
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
  })

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
  const plan = planAutoMapping(row.target_output_schema, await Effect.runPromise(existingForPlan(db, row.id)))
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

const existingForPlan = (db: Conn, projectId: string) =>
  Effect.map(
    Effect.all([loadMappingContext(db, projectId), DimensionsRepo.dimensionsOfProject(db, projectId)], {
      concurrency: "unbounded",
    }),
    ([context, dimensionRows]) => ({
      agents: context.agents.map((a): ExistingAgent => ({ ...a })),
      dimensions: dimensionRows.map(
        (d): ExistingDimension => ({ name: d.name, source: d.source as ExistingDimension["source"] }),
      ),
    }),
  )

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
  const before = await Effect.runPromise(OutputSchemasRepo.outputSchemaOf(db, projectId))
  const descriptions = current(before) ? await describePlannedAgents(db, before, model) : new Map()
  await db.transaction().execute(async (trx) => {
    const row = await Effect.runPromise(OutputSchemasRepo.outputSchemaOf(trx, projectId, true))
    if (!current(row)) {
      await complete(trx)
      return
    }
    const outcome = await Effect.runPromise(Effect.either(buildMapping(trx, row, descriptions)))
    if (outcome._tag === "Left") {
      await Effect.runPromise(OutputSchemasRepo.saveMappingFailure(trx, projectId, outcome.left))
    } else {
      await Effect.runPromise(
        OutputSchemasRepo.saveGeneratedMapping(trx, projectId, outcome.right, model.name),
      )
      if (row.output_launch_after_mapping) await Effect.runPromise(requestLaunch(trx, projectId))
    }
    await complete(trx)
  })
}

const buildMapping = (
  trx: Transaction<Database>,
  row: ProjectRow,
  descriptions: ReadonlyMap<string, FieldDescription>,
) =>
  Effect.gen(function* () {
    const projectId = row.id
    const plan = planAutoMapping(row.target_output_schema, yield* existingForPlan(trx, projectId))
    if (!plan.ok) return yield* Effect.fail(plan.error)
    const rows = yield* DimensionsRepo.dimensionsOfProject(trx, projectId)
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
    const context = yield* loadMappingContext(trx, projectId)
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
      // An outage (storage, the database) is retried for the retry window without failing the mapping.
      if (retryable && (task.attempts < task.max_attempts || outageOf(e) !== undefined)) throw e
      await ctx.db.transaction().execute(async (trx) => {
        const row = await Effect.runPromise(
          OutputSchemasRepo.outputSchemaOf(trx, String(task.payload.project_id), true),
        )
        if (
          row.output_schema_version === Number(task.payload.version) &&
          row.output_mapping_status === "pending"
        )
          await Effect.runPromise(
            OutputSchemasRepo.saveMappingFailure(
              trx,
              row.id,
              `automatic mapping failed: ${e instanceof Error ? e.message : String(e)}`,
            ),
          )
        await ctx.complete(trx)
      })
    }
  }

/**
 * Housekeeping: a generation whose last attempt died with its worker (no handler left to record it)
 * leaves the status `failed` rather than `pending` forever.
 */
export const failAbandonedMappings = (db: Kysely<Database>): Promise<number> =>
  Effect.runPromise(OutputSchemasRepo.failAbandonedMappings(db))

// ---------------------------------------------------------------------------------------------------------
// Results in the schema's shape

const dimensionKey = (agentName: string, values: Readonly<Record<string, string>>) =>
  JSON.stringify([agentName, Object.entries(values).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))])

/** Every current result of the project as a lookup by agent name and dimension values. */
const loadLeaves = (db: Conn, projectId: string, appUrl: string) =>
  Effect.gen(function* () {
    const [rows, dimensions] = yield* Effect.all(
      [OutputSchemasRepo.currentResults(db, projectId), DimensionsRepo.dimensionsOfProject(db, projectId)],
      { concurrency: "unbounded" },
    )
    const names = new Map(dimensions.map((d) => [d.id, d.name]))
    const leaves = new Map<string, LeafResult>()
    const base = appUrl.replace(/\/+$/, "")
    for (const r of rows) {
      const values: Record<string, string> = {}
      for (const d of r.dimension_values ?? [])
        values[names.get(d.dimension_id) ?? d.name] = d.dimension_value
      const status = r.resolution_status as LeafResult["status"]
      leaves.set(dimensionKey(r.name, values), {
        value: status === "No result" || r.value === null || r.value === undefined ? null : String(r.value),
        status,
        url: `${base}/projects/${projectId}/agents/${r.agent_id}/${r.id}`,
      })
    }
    return (agentName: string, values: Readonly<Record<string, string>>) =>
      leaves.get(dimensionKey(agentName, values))
  })

// ---------------------------------------------------------------------------------------------------------
// The service

export class OutputSchemas extends Effect.Service<OutputSchemas>()("@dxs/services/OutputSchemas", {
  accessors: true,
  effect: Effect.gen(function* () {
    const storage = Context.make(Db, yield* Db).pipe(
      Context.add(BlobStore, yield* BlobStore),
      Context.add(AppUrl, yield* AppUrl),
      Context.add(UploadLimits, yield* UploadLimits),
      Context.add(RequestLimits, yield* RequestLimits),
    )
    const provide = Effect.provide(storage)
    return {
      /** The output schema record; 404 when the project has no schema. */
      get: (projectId: string) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          return yield* withDb((db) =>
            Effect.gen(function* () {
              yield* checkProject(db, org.id, projectId)
              const row = yield* OutputSchemasRepo.outputSchemaOf(db, projectId)
              if (row.target_output_schema === null) return yield* noSchema(projectId)
              const context = yield* loadMappingContext(db, projectId)
              return toRecord(row, context)
            }),
          )
        }).pipe(provide),

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
              yield* checkLiveProject(trx, org.id, projectId)
              const current = yield* OutputSchemasRepo.outputSchemaOf(trx, projectId, true)
              const changed =
                current.target_output_schema === null || !sameJson(current.target_output_schema, input.schema)
              // The agents and dimensions a mapping names: read once, the PUT does not change them.
              const context = yield* loadMappingContext(trx, projectId)
              if (input.auto_map) {
                yield* OutputSchemasRepo.requestAutoMapping(trx, projectId, input.schema, false)
              } else {
                let mapping: OutputSchemasRepo.ManualMapping
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
                  mapping = {
                    _tag: "Kept",
                    usable,
                    inSync: kept === null,
                    first: current.target_output_schema === null,
                  }
                } else if (input.mapping === null) {
                  mapping = { _tag: "Cleared" }
                } else {
                  const diagnostics = validateMapping(input.schema, input.mapping, context)
                  if (hasMappingErrors(diagnostics)) return yield* unsaveable(diagnostics)
                  mapping = { _tag: "Saved", mapping: input.mapping }
                }
                yield* OutputSchemasRepo.saveManualSchema(trx, projectId, input.schema, mapping)
              }
              const row = yield* OutputSchemasRepo.outputSchemaOf(trx, projectId)
              return toRecord(row, context)
            }),
          )
        }).pipe(provide),

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
              yield* checkProject(db, org.id, projectId)
              const row = yield* OutputSchemasRepo.outputSchemaOf(db, projectId)
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
              const [context, lookup] = yield* Effect.all(
                [loadMappingContext(db, projectId), loadLeaves(db, projectId, appUrl)],
                { concurrency: "unbounded" },
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
        }).pipe(provide),

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
            (input.project_name ?? "").trim() === ""
              ? EXTRACT_DEFAULT_PROJECT_NAME
              : input.project_name!.trim()
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
                  if (input.auto_map) yield* OutputSchemasRepo.requestAutoMapping(trx, id, schema, true)
                  else yield* OutputSchemasRepo.setInitialSchema(trx, id, schema)
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
        }).pipe(provide),
    }
  }),
}) {}
