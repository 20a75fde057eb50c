/**
 * Output schemas (api-v1.md "Output schema record", "Results in schema format", "One-call extraction"):
 * a project's target JSON Schema, the mapping from its agents and dimensions to the schema's fields,
 * automatic generation of agents and mapping in the background, results in the schema's shape, and
 * `POST /extract/`. The rules of mappings live in `@dxs/domain/OutputMapping` and `AutoMapping`.
 */
import { BlobStore, Db } from "@dxs/db"
import { Context, Effect } from "effect"
import { UploadLimits } from "./Documents.ts"
import { RequestLimits } from "./HttpLimits.ts"
import { type ExtractRequest, extract } from "./outputSchemas/Extract.ts"
import { get, type OutputSchemaPut, put } from "./outputSchemas/Mapping.ts"
import { AppUrl, results } from "./outputSchemas/SchemaResults.ts"

export type { MappingStatus } from "@dxs/domain/Enums"
export {
  failAbandonedMappings,
  OUTPUT_MAPPING_TASK,
  outputMappingTaskHandler,
} from "./outputSchemas/AutoMapping.ts"
export {
  EXTRACT_DEFAULT_PROJECT_NAME,
  EXTRACT_MAX_FILES,
  type ExtractRequest,
  type ExtractResponse,
} from "./outputSchemas/Extract.ts"
export { loadMappingContext, type OutputSchemaPut, type OutputSchemaRecord } from "./outputSchemas/Mapping.ts"
export { AppUrl } from "./outputSchemas/SchemaResults.ts"

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
      get: (projectId: string) => get(projectId).pipe(provide),

      /** PUT schema, per the spec's rules (see the README's "Output schemas"). */
      put: (projectId: string, input: OutputSchemaPut) => put(projectId, input).pipe(provide),

      /**
       * The results as a JSON object in the shape of the project's schema: 400 without a schema, 409 while
       * the mapping is being generated (or none is saved), 422 when generation failed.
       */
      results: (projectId: string, options: { readonly enrich?: boolean | undefined }) =>
        results(projectId, options).pipe(provide),

      /**
       * `POST /extract/`: checks everything first (nothing is created for a bad schema, a missing, empty,
       * too large or unsupported file), stores the files, then in one transaction creates the project, its
       * documents and parse tasks and the schema; with `auto_map` the mapping task also launches the pipeline.
       * With an Idempotency-Key, a repeated request gets the first answer again (`replayed`); a different
       * request with the same key is refused (422).
       */
      extract: (input: ExtractRequest, options: { readonly idempotencyKey?: string | undefined } = {}) =>
        extract(input, options).pipe(provide),
    }
  }),
}) {}
