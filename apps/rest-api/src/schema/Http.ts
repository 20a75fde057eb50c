import { BadRequest, Documents, EXTRACT_MAX_FILES, OutputSchemas } from "@dxs/services"
import { HttpApiBuilder, HttpServerResponse, Multipart } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { Api } from "../Api.ts"
import { discardRest, PART_HEADER_ALLOWANCE, uploadProblem } from "../documents/Http.ts"

/** In a form body the schema and the mapping arrive as JSON text. */
const jsonField = (value: unknown, path: string) => {
  if (typeof value !== "string") return Effect.succeed(value)
  try {
    return Effect.succeed(JSON.parse(value) as unknown)
  } catch {
    return BadRequest.of(`${path} must be JSON`, [{ path, message: "must be JSON" }])
  }
}

const singleText = (form: Multipart.Persisted, field: string) => {
  const value = form[field]
  if (value === undefined) return Effect.succeed(undefined)
  if (typeof value === "string") return Effect.succeed(value)
  return BadRequest.of(`Give \`${field}\` once, as text`, [
    { path: field, message: "must be a single text field" },
  ])
}

export const OutputSchemaHttp = HttpApiBuilder.group(Api, "outputSchema", (handlers) =>
  Effect.gen(function* () {
    const schemas = yield* OutputSchemas
    const documents = yield* Documents
    const maxBytes = documents.maxUploadBytes
    return (
      handlers
        .handle("get", ({ path }) => schemas.get(path.project_id))
        .handle("put", ({ path, payload }) =>
          Effect.gen(function* () {
            const schema = yield* jsonField(payload.schema, "schema")
            const mapping =
              payload.mapping === undefined ? undefined : yield* jsonField(payload.mapping, "mapping")
            return yield* schemas.put(path.project_id, { schema, auto_map: payload.auto_map, mapping })
          }),
        )
        .handle("results", ({ path, urlParams }) =>
          schemas.results(path.project_id, { enrich: urlParams.enrich }),
        )
        // Raw: several files under the configured limit; a too large file is a 413, not a defect.
        .handleRaw("extract", ({ request }) =>
          Effect.gen(function* () {
            if (!(request.headers["content-type"] ?? "").toLowerCase().includes("multipart/form-data"))
              return yield* BadRequest.of(
                "Send multipart/form-data with the files in `files`, the JSON Schema in `schema` and `auto_map`",
              )
            const form = yield* Multipart.withLimits(request.multipart, {
              maxFileSize: Option.some(maxBytes + PART_HEADER_ALLOWANCE),
              maxParts: Option.some(EXTRACT_MAX_FILES + 8),
            }).pipe(
              Effect.catchTag("MultipartError", (e) =>
                Effect.zipRight(discardRest(request, maxBytes), uploadProblem(e, maxBytes)),
              ),
            )
            const parts = form.files
            if (parts !== undefined && (typeof parts === "string" || !parts.every(Multipart.isPersistedFile)))
              return yield* BadRequest.of("`files` must be file parts", [
                { path: "files", message: "must be files" },
              ])
            const files = (parts ?? []).filter(Multipart.isPersistedFile).map((f) => ({
              path: f.path,
              name: f.name,
              contentType: f.contentType,
            }))
            const schema = yield* singleText(form, "schema")
            if (schema === undefined)
              return yield* BadRequest.of("`schema` (a JSON Schema as a JSON string) is required", [
                { path: "schema", message: "is required" },
              ])
            const autoMap = yield* singleText(form, "auto_map")
            if (autoMap !== "true" && autoMap !== "false")
              return yield* BadRequest.of("`auto_map` is required: true or false", [
                { path: "auto_map", message: "must be true or false" },
              ])
            const projectName = yield* singleText(form, "project_name")
            const accepted = yield* schemas.extract({
              files,
              schema,
              project_name: projectName,
              auto_map: autoMap === "true",
            })
            return HttpServerResponse.unsafeJson(accepted, { status: 202 })
          }),
        )
    )
  }),
)

export const OutputSchemaLive = OutputSchemaHttp.pipe(Layer.provide(OutputSchemas.Default))
