import { BadRequest, Documents, EXTRACT_MAX_FILES, OutputSchemas } from "@dxs/services"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import {
  answerResponse,
  readUploadForm,
  UPLOAD_FIELD_MAX_BYTES,
  type UploadForm,
  type UploadFormLimits,
} from "../UploadForm.ts"

/** Whether a body is a form (urlencoded or multipart), whose fields are text, rather than JSON. */
const isForm = (contentType: string | undefined) =>
  /^\s*(application\/x-www-form-urlencoded|multipart\/form-data)\b/i.test(contentType ?? "")

/**
 * In a form body the schema and the mapping arrive as JSON text; in a JSON body they are JSON, and a
 * string is left for the service to refuse as not an object.
 */
const jsonField = (value: unknown, path: string, form: boolean) => {
  if (!form || typeof value !== "string") return Effect.succeed(value)
  try {
    return Effect.succeed(JSON.parse(value) as unknown)
  } catch {
    return BadRequest.of(`${path} must be JSON`, [{ path, message: "must be JSON" }])
  }
}

const singleText = (form: UploadForm, field: string) => {
  const values = form.fields.get(field) ?? []
  if (values.length <= 1) return Effect.succeed(values[0])
  return BadRequest.of(`Give \`${field}\` once, as text`, [
    { path: field, message: "must be a single text field" },
  ])
}

const extractForm = (maxBytes: number): UploadFormLimits => ({
  files: { files: EXTRACT_MAX_FILES },
  maxFileBytes: maxBytes,
  maxParts: EXTRACT_MAX_FILES + 8,
  maxFields: 8,
  maxFieldBytes: UPLOAD_FIELD_MAX_BYTES,
  notMultipart:
    "Send multipart/form-data with the files in `files`, the JSON Schema in `schema` and `auto_map`",
})

export const OutputSchemaHttp = HttpApiBuilder.group(Api, "outputSchema", (handlers) =>
  Effect.gen(function* () {
    const schemas = yield* OutputSchemas
    const documents = yield* Documents
    const maxBytes = documents.maxUploadBytes
    return (
      handlers
        .handle("get", ({ path }) => schemas.get(path.project_id))
        .handle("put", ({ path, payload, request }) =>
          Effect.gen(function* () {
            const form = isForm(request.headers["content-type"])
            const schema = yield* jsonField(payload.schema, "schema", form)
            const mapping =
              payload.mapping === undefined ? undefined : yield* jsonField(payload.mapping, "mapping", form)
            return yield* schemas.put(path.project_id, { schema, auto_map: payload.auto_map, mapping })
          }),
        )
        .handle("results", ({ path, urlParams }) =>
          schemas.results(path.project_id, { enrich: urlParams.enrich }),
        )
        // Raw: the body is read by our own multipart reader (UploadForm.ts), under the configured limits.
        .handleRaw("extract", ({ headers, request }) =>
          Effect.gen(function* () {
            const form = yield* readUploadForm(request, extractForm(maxBytes))
            const files = form.files.map((f) => ({ path: f.path, name: f.name, contentType: f.contentType }))
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
            const answer = yield* schemas.extract(
              { files, schema, project_name: projectName, auto_map: autoMap === "true" },
              { idempotencyKey: headers["idempotency-key"] },
            )
            return answerResponse(answer)
          }).pipe(Effect.scoped),
        )
    )
  }),
)
