/**
 * Results in the schema's shape.
 */
import { type Conn, withDb } from "@dxs/db"
import * as DimensionsRepo from "@dxs/db/repositories/Dimensions"
import * as OutputSchemasRepo from "@dxs/db/repositories/OutputSchemas"
import { type LeafResult, type MappingNode, renderSchema } from "@dxs/domain/OutputMapping"
import { Context, Effect } from "effect"
import { CurrentOrganization } from "../CurrentOrganization.ts"
import { BadRequest, Conflict, Unprocessable } from "../Errors.ts"
import { checkProject } from "../Projects.ts"
import { targetSchemaCheck } from "../TargetSchema.ts"
import { loadMappingContext, unsatisfied } from "./Mapping.ts"

/** Where the web application lives: `_service_url` deep links start with it (config `APP_URL`). */
export class AppUrl extends Context.Reference<AppUrl>()("@dxs/services/AppUrl", {
  defaultValue: () => "http://localhost:8080",
}) {}

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

/**
 * The results as a JSON object in the shape of the project's schema: 400 without a schema, 409 while
 * the mapping is being generated (or none is saved), 422 when generation failed.
 */
export const results = (projectId: string, options: { readonly enrich?: boolean | undefined }) =>
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
  })
