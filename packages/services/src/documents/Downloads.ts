/**
 * The original file of a document: for a caller of the organisation, or behind a signed link.
 */
import { timingSafeEqual } from "node:crypto"
import { withDb } from "@dxs/db"
import * as Repo from "@dxs/db/repositories/Documents"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Clock, Effect, Schema } from "effect"
import { CurrentOrganization } from "../CurrentOrganization.ts"
import { NotFound, problemType } from "../Errors.ts"
import { type DocumentsEnv, findDocument } from "./Records.ts"

/** A signed download link that is expired or does not match (403, problem+json). */
export class DownloadForbidden extends Schema.TaggedError<DownloadForbidden>()(
  "DownloadForbidden",
  {
    type: Schema.String,
    title: Schema.String,
    status: Schema.Int,
    detail: Schema.String,
  },
  HttpApiSchema.annotations({
    status: 403,
    description: "The download link is expired or its signature is wrong",
  }),
) {
  static of(detail: string) {
    return new DownloadForbidden({ type: problemType("forbidden"), title: "Forbidden", status: 403, detail })
  }
}
export const downloadForbiddenResponse = DownloadForbidden.pipe(
  HttpApiSchema.withEncoding({ kind: "Json", contentType: "application/problem+json" }),
)

const isBase64Url = (s: string) => /^[A-Za-z0-9_-]+$/.test(s)

export const downloads = ({ records, provide }: DocumentsEnv) => {
  const { signingSecret, sign, openBlob } = records
  return {
    /** The original file of a document of the current organisation. */
    open: (projectId: string, documentId: string) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        const row = yield* withDb((db) => findDocument(db, org.id, projectId, documentId))
        return yield* openBlob(row)
      }).pipe(provide),

    /** The original file behind a signed `file_url`; no API key, the signature is the authorisation. */
    openSigned: (documentId: string, expires: number, signature: string) =>
      Effect.gen(function* () {
        const row = yield* withDb((db) => Repo.findDocument(db, documentId))
        if (!row) return yield* NotFound.of("Document", documentId)
        const key = yield* signingSecret
        const expected = Buffer.from(sign(key, row.id, row.version, expires))
        const given = Buffer.from(signature)
        if (!isBase64Url(signature) || given.length !== expected.length || !timingSafeEqual(given, expected))
          return yield* DownloadForbidden.of("The download link's signature is not valid")
        if (expires * 1000 < (yield* Clock.currentTimeMillis))
          return yield* DownloadForbidden.of(
            "The download link has expired; fetch the document again for a fresh file_url",
          )
        return yield* openBlob(row)
      }).pipe(provide),
  }
}
