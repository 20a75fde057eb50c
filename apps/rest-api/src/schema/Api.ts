import { ExtractResponse, OutputSchemaRecord, OutputSchemaRequest } from "@dxs/domain/contract/OutputSchema"
import { EXTRACT_MAX_FILES } from "@dxs/services"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Authentication } from "../Auth.ts"
import { flexibleBody } from "../Body.ts"
import {
  BadRequest,
  Conflict,
  IdempotencyHeaders,
  NotFound,
  PayloadTooLarge,
  Unprocessable,
  UnsupportedMediaType,
  Uuid,
  uploadFiles,
} from "../Common.ts"

export const ExtractForm = Schema.Struct({
  files: uploadFiles(
    `one or more documents (repeat the field; at most ${EXTRACT_MAX_FILES})`,
    EXTRACT_MAX_FILES,
  ),
  schema: Schema.String.annotations({
    description: "the target JSON Schema (Draft 2020-12) as a JSON string",
  }),
  project_name: Schema.optional(Schema.String.annotations({ description: "default `API Extraction`" })),
  auto_map: Schema.String.annotations({ description: "`true` or `false`" }),
}).annotations({ identifier: "V1ExtractRequest" })

const ProjectPath = Schema.Struct({ project_id: Uuid })

export class OutputSchemaApi extends HttpApiGroup.make("outputSchema")
  .add(
    HttpApiEndpoint.get("get", "/projects/:project_id/schema/")
      .setPath(ProjectPath)
      .addSuccess(OutputSchemaRecord)
      .annotate(
        OpenApi.Summary,
        "The project's output schema, mapping, mapping status and diagnostics; poll until status is success after enabling automatic mapping",
      ),
  )
  .add(
    HttpApiEndpoint.put("put", "/projects/:project_id/schema/")
      .setPath(ProjectPath)
      .setPayload(flexibleBody(OutputSchemaRequest))
      .addSuccess(OutputSchemaRecord)
      .addError(Unprocessable)
      .annotate(
        OpenApi.Summary,
        "Set the output schema: auto_map true generates agents and a mapping in the background; false saves (object), clears (null) or keeps (omitted, new or changed schema only) the mapping",
      )
      .annotate(
        OpenApi.Description,
        "A mapping with error diagnostics is refused with 422 and the diagnostics; warnings are saved and the affected fields are left out of results. With auto_map false, `mapping` is required (an object or null) when the schema is the one already stored, or when the stored mapping still fits it: omitting it is allowed only for a new or changed schema without a usable mapping (else 400). With auto_map true, `mapping` must be omitted or null (else 400).",
      ),
  )
  .add(
    HttpApiEndpoint.get("results", "/projects/:project_id/results/schema/")
      .setPath(ProjectPath)
      .setUrlParams(
        Schema.Struct({
          enrich: Schema.optional(
            Schema.BooleanFromString.annotations({
              description:
                "add <field>_consistency and <field>_service_url beside the fields agents fill, and _missing (the required values that could not be given) at the root, where the schema admits those keys",
            }),
          ),
        }),
      )
      .addSuccess(
        Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
          jsonSchema: {
            type: "object",
            description: "an object that validates against the project's schema",
          },
        }),
      )
      .addError(Conflict)
      .addError(Unprocessable)
      .annotate(
        OpenApi.Summary,
        "The results as a JSON object conforming to the project's schema (400 without a schema, 409 while the mapping is generated, 422 when generation failed)",
      )
      .annotate(
        OpenApi.Description,
        "A 200 body always validates against the schema, objects in the schema's property order. A required field without a usable value is null where the schema allows null, else the agent's value_if_not_found (n/a when empty) converted to the field's type when the field accepts it; else its object is left out where that keeps the answer valid (an array item, a key, an optional object). When nothing can make the answer valid (for example a required field that is not mapped), the answer is 422 with type urn:dxs:problem:schema-unsatisfied and errors listing what is missing; with enrich=true it is 200 with what there is and _missing at its root, the only body that does not validate.",
      ),
  )
  .add(
    HttpApiEndpoint.post("extract", "/extract/")
      .setHeaders(IdempotencyHeaders)
      .setPayload(HttpApiSchema.Multipart(ExtractForm))
      .addSuccess(ExtractResponse, { status: 202 })
      .addError(PayloadTooLarge)
      .addError(UnsupportedMediaType)
      .addError(Unprocessable)
      .annotate(
        OpenApi.Summary,
        "One call: create a project with the files and the schema; with auto_map true, agents and mapping are generated and the pipeline runs",
      )
      .annotate(
        OpenApi.Description,
        "With an `Idempotency-Key` header, a retry gets the first answer again (`Idempotent-Replayed: true`) and creates no second project; the same key with a different request (other files or fields) is 422.",
      ),
  )
  .addError(BadRequest)
  .addError(NotFound)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Output schema")
  .annotate(
    OpenApi.Description,
    "A target JSON Schema per project, the mapping of agents and dimensions to its fields, and results in its shape.",
  ) {}
