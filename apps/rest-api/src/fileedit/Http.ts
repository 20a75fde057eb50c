import { BadRequest, FileEdit } from "@dxs/services"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"
import { Api } from "../Api.ts"
import { fileDownload } from "../Download.ts"
import { readUploadForm, UPLOAD_FIELD_MAX_BYTES } from "../UploadForm.ts"

export const FileEditHttp = HttpApiBuilder.group(Api, "fileEdit", (handlers) =>
  Effect.gen(function* () {
    const fileEdit = yield* FileEdit
    return (
      handlers
        // Raw: the body is read by our own multipart reader (UploadForm.ts), under the template limit.
        .handleRaw("start", ({ path, request }) =>
          Effect.gen(function* () {
            yield* fileEdit.checkTarget(path.project_id)
            const form = yield* readUploadForm(request, {
              files: { file: 1 },
              maxFileBytes: fileEdit.maxTemplateBytes,
              maxParts: 8,
              maxFields: 4,
              maxFieldBytes: UPLOAD_FIELD_MAX_BYTES,
              notMultipart: "Send the template as multipart/form-data with the file in field `file`",
            })
            const file = form.files.find((f) => f.field === "file")
            if (file === undefined)
              return yield* BadRequest.of("The multipart field `file` with the template is missing", [
                { path: "file", message: "is missing" },
              ])
            const status = yield* fileEdit.start(path.project_id, {
              path: file.path,
              name: file.name,
              contentType: file.contentType,
            })
            return HttpServerResponse.unsafeJson(status, { status: 202 })
          }).pipe(Effect.scoped),
        )
        .handle("status", ({ path }) => fileEdit.status(path.project_id))
        .handle("clear", ({ path }) => fileEdit.clear(path.project_id))
        .handle("download", ({ path }) => Effect.map(fileEdit.download(path.project_id), fileDownload))
    )
  }),
)
