/**
 * A project's output schema and its mapping: the record, and PUT by the spec's rules.
 */
import { type Conn, type ProjectRow, transaction, withDb } from "@dxs/db"
import * as AgentsRepo from "@dxs/db/repositories/Agents"
import * as DimensionsRepo from "@dxs/db/repositories/Dimensions"
import * as OutputSchemasRepo from "@dxs/db/repositories/OutputSchemas"
import type {
  OutputSchemaRecord as OutputSchemaRecordSchema,
  OutputSchemaRequest,
} from "@dxs/domain/contract/OutputSchema"
import type { MappingStatus } from "@dxs/domain/Enums"
import {
  hasMappingErrors,
  type MappingContext,
  type MappingDiagnostic,
  type MissingValue,
  validateMapping,
} from "@dxs/domain/OutputMapping"
import { Effect } from "effect"
import { CurrentOrganization } from "../CurrentOrganization.ts"
import { isSystemDimension } from "../Dimensions.ts"
import { BadRequest, NotFound, problemType, Unprocessable } from "../Errors.ts"
import { checkLiveProject, checkProject } from "../Projects.ts"
import { checkJsonInput, checkTargetSchema } from "../TargetSchema.ts"
import { isoOrNull } from "../Time.ts"

/** The output schema record (V1SchemaResponse). */
export type OutputSchemaRecord = typeof OutputSchemaRecordSchema.Type

/** `mapping` `undefined` = omitted. */
export type OutputSchemaPut = OutputSchemaRequest

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

export const toRecord = (row: ProjectRow, context: MappingContext): OutputSchemaRecord => ({
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

export const noSchema = (projectId: string) =>
  NotFound.of(`Project ${projectId} has no output schema; PUT one to /projects/${projectId}/schema/`)

export const sameJson = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b)

export const canonicalJson = (v: unknown): string =>
  JSON.stringify(v, (_k, x) =>
    x !== null && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(
          Object.keys(x)
            .sort()
            .map((k) => [k, (x as Record<string, unknown>)[k]]),
        )
      : x,
  )

export const describeMissing = (m: MissingValue) => {
  const where = Object.entries(m.dimension_values)
    .map(([dimension, value]) => `${dimension} ${JSON.stringify(value)}`)
    .join(", ")
  return where === "" ? m.message : `(${where}) ${m.message}`
}

/**
 * The results cannot fill the schema validly (a required value nothing can give): said in a 422 rather than
 * answered with a document that does not validate. `errors` lists what is missing (mapping paths).
 */
export const unsatisfied = (listed: ReadonlyArray<MissingValue>) =>
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

export const unsaveable = (diagnostics: ReadonlyArray<MappingDiagnostic>) =>
  Unprocessable.of(
    `The mapping has ${diagnostics.filter((d) => d.severity === "error").length} error(s) and was not saved: ${diagnostics
      .filter((d) => d.severity === "error")
      .map((d) => `${d.path === "" ? "(root)" : d.path}: ${d.message}`)
      .join("; ")}`,
    diagnostics,
  )

/** The output schema record; 404 when the project has no schema. */
export const get = (projectId: string) =>
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
  })

/** PUT schema, per the spec's rules (see the README's "Output schemas"). */
export const put = (projectId: string, input: OutputSchemaPut) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    yield* checkTargetSchema(input.schema)
    if (input.mapping !== undefined && input.mapping !== null) {
      // An object or null, as described: any other JSON value is the body's fault, not the mapping's rules'.
      if (typeof input.mapping !== "object" || Array.isArray(input.mapping))
        return yield* BadRequest.of("mapping must be an object or null", [
          { path: "mapping", message: "must be an object or null" },
        ])
      yield* checkJsonInput(input.mapping, "mapping")
    }
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
            const usable = kept !== null && !hasMappingErrors(validateMapping(input.schema, kept, context))
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
  })
