/**
 * `POST /extract/`: files and a schema in, a project that extracts them out.
 */
import { randomUUID } from "node:crypto"
import { BlobStore, transaction, undoUnlessCommitted, withDb } from "@dxs/db"
import * as OutputSchemasRepo from "@dxs/db/repositories/OutputSchemas"
import type { ExtractResponse as ExtractResponseSchema } from "@dxs/domain/contract/OutputSchema"
import { Effect } from "effect"
import { CurrentOrganization } from "../CurrentOrganization.ts"
import {
  checkUpload,
  insertUpload,
  placeUpload,
  storeUpload,
  type UploadedFile,
  UploadLimits,
} from "../Documents.ts"
import { BadRequest } from "../Errors.ts"
import { type Answer, claimKey, earlierAnswer, idempotentRequest, rememberKey } from "../Idempotency.ts"
import { validName } from "../Inputs.ts"
import { insertProject } from "../Projects.ts"
import { checkTargetSchema, parseJsonInput } from "../TargetSchema.ts"

/** The most files one `POST /extract/` call may carry (DESIGN §4). */
export const EXTRACT_MAX_FILES = 50
export const EXTRACT_DEFAULT_PROJECT_NAME = "API Extraction"

export interface ExtractRequest {
  readonly files: ReadonlyArray<UploadedFile>
  /** The `schema` form field: a JSON string. */
  readonly schema: string
  readonly project_name?: string | undefined
  readonly auto_map: boolean
}

export type ExtractResponse = typeof ExtractResponseSchema.Type

/**
 * `POST /extract/`: checks everything first (nothing is created for a bad schema, a missing, empty,
 * too large or unsupported file), stores the files, then in one transaction creates the project, its
 * documents and parse tasks and the schema; with `auto_map` the mapping task also launches the pipeline.
 * With an Idempotency-Key, a repeated request gets the first answer again (`replayed`); a different
 * request with the same key is refused (422).
 */
export const extract = (
  input: ExtractRequest,
  options: { readonly idempotencyKey?: string | undefined } = {},
) =>
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
      return yield* BadRequest.of(`At most ${EXTRACT_MAX_FILES} files per call (got ${input.files.length})`, [
        { path: "files", message: `must be at most ${EXTRACT_MAX_FILES} files` },
      ])
    const checked = yield* Effect.forEach(input.files, (f, i) => checkUpload(f, maxFileBytes, `files/${i}`))
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
  })
