/**
 * Automatic mapping, the background task: agents, dimensions and a mapping planned from the schema.
 */
import { type Conn, type Database, type ProjectRow, type TaskRow, transactionOn } from "@dxs/db"
import { outageOf } from "@dxs/db/Outage"
import * as DimensionsRepo from "@dxs/db/repositories/Dimensions"
import * as OutputSchemasRepo from "@dxs/db/repositories/OutputSchemas"
import {
  type ExistingAgent,
  type ExistingDimension,
  type PlannedAgent,
  planAutoMapping,
} from "@dxs/domain/AutoMapping"
import { enumOf, keywordOf, schemaAt, schemaTypes } from "@dxs/domain/JsonSchema"
import { hasMappingErrors, validateMapping } from "@dxs/domain/OutputMapping"
import type { FieldDescription, FieldToDescribe, LanguageModelShape } from "@dxs/pipeline/llm/LanguageModel"
import { requestLaunch } from "@dxs/pipeline/run/Runs"
import { Cause, Effect, Either } from "effect"
import type { Kysely, Transaction } from "kysely"
import { writeAgent } from "../Agents.ts"
import type { BackgroundTaskContext, BackgroundTaskHandler } from "../Archive.ts"
import { insertDimension, isSystemDimension } from "../Dimensions.ts"
import { loadMappingContext } from "./Mapping.ts"

export const OUTPUT_MAPPING_TASK = OutputSchemasRepo.OUTPUT_MAPPING_TASK

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
const describePlannedAgents = (db: Kysely<Database>, row: ProjectRow, model: LanguageModelShape) =>
  Effect.gen(function* () {
    const plan = planAutoMapping(row.target_output_schema, yield* existingForPlan(db, row.id))
    if (!plan.ok || plan.agents.length === 0) return new Map<string, FieldDescription>()
    const title = keywordOf(row.target_output_schema, row.target_output_schema, "title") ?? ""
    const described = yield* model.describeFields({
      schemaTitle: title,
      fields: fieldsToDescribe(row.target_output_schema, plan.agents),
    })
    return new Map(described.fields.map((f) => [f.path, f]))
  })

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
const generateMapping = (
  db: Kysely<Database>,
  task: TaskRow,
  model: LanguageModelShape,
  complete: (trx: Transaction<Database>) => Promise<void>,
) =>
  Effect.gen(function* () {
    const projectId = String(task.payload.project_id)
    const version = Number(task.payload.version)
    const current = (row: ProjectRow) =>
      row.output_auto_map && row.output_schema_version === version && row.archived_at === null
    const before = yield* OutputSchemasRepo.outputSchemaOf(db, projectId)
    const descriptions = current(before)
      ? yield* describePlannedAgents(db, before, model)
      : new Map<string, FieldDescription>()
    yield* transactionOn(db, (trx) =>
      Effect.gen(function* () {
        const row = yield* OutputSchemasRepo.outputSchemaOf(trx, projectId, true)
        if (current(row)) {
          const outcome = yield* Effect.either(buildMapping(trx, row, descriptions))
          if (Either.isLeft(outcome)) {
            yield* OutputSchemasRepo.saveMappingFailure(trx, projectId, outcome.left)
          } else {
            yield* OutputSchemasRepo.saveGeneratedMapping(trx, projectId, outcome.right, model.name)
            if (row.output_launch_after_mapping) yield* requestLaunch(trx, projectId)
          }
        }
        yield* Effect.promise(() => complete(trx))
      }),
    )
  })

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
 * `failed`. Every failure but an outage counts as an attempt and is retried until the last one, a model
 * error too, whether or not it says it is worth retrying.
 */
export const outputMappingTaskHandler =
  (model: LanguageModelShape): BackgroundTaskHandler =>
  (task, ctx) =>
    generateMapping(ctx.db, task, model, ctx.complete).pipe(
      Effect.catchAllCause((cause) =>
        // An outage (storage, the database) is retried for the retry window without failing the mapping.
        Cause.isInterruptedOnly(cause) || task.attempts < task.max_attempts || outageOf(cause) !== undefined
          ? Effect.failCause(cause)
          : recordMappingFailure(ctx, task, cause),
      ),
    )

/** The last attempt failed: the mapping's status says so, unless a newer schema version took over. */
const recordMappingFailure = (ctx: BackgroundTaskContext, task: TaskRow, cause: Cause.Cause<unknown>) =>
  transactionOn(ctx.db, (trx) =>
    Effect.gen(function* () {
      const row = yield* OutputSchemasRepo.outputSchemaOf(trx, String(task.payload.project_id), true)
      if (
        row.output_schema_version === Number(task.payload.version) &&
        row.output_mapping_status === "pending"
      )
        yield* OutputSchemasRepo.saveMappingFailure(
          trx,
          row.id,
          // The message of the first failure (or defect) of the attempt.
          `automatic mapping failed: ${Cause.prettyErrors(cause)[0]?.message || "An error has occurred"}`,
        )
      yield* Effect.promise(() => ctx.complete(trx))
    }),
  )

/**
 * Housekeeping: a generation whose last attempt died with its worker (no handler left to record it)
 * leaves the status `failed` rather than `pending` forever.
 */
export const failAbandonedMappings = (db: Kysely<Database>): Effect.Effect<number> =>
  OutputSchemasRepo.failAbandonedMappings(db)
