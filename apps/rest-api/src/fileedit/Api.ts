import { FileEditStatus } from "@dxs/domain/contract/FileEdit"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Authentication } from "../Auth.ts"
import {
  BadRequest,
  Conflict,
  NotFound,
  PayloadTooLarge,
  UnsupportedMediaType,
  Uuid,
  uploadFile,
} from "../Common.ts"

export const FileEditUpload = Schema.Struct({
  file: uploadFile(
    "the template: an .xlsx workbook or a .docx document with {{Agent name}} or {{Agent name | Dimension=value}} placeholders",
  ),
}).annotations({ identifier: "V1FileEditUpload" })

const ProjectPath = Schema.Struct({ project_id: Uuid })

/** Described as any media type: the filled file is served with its format's Content-Type. */
const FilledBytes = HttpApiSchema.Uint8Array({ contentType: "*/*" }).annotations({
  description:
    'the filled file (Content-Type of .xlsx or .docx), with `Content-Disposition: attachment; filename="<template>-filled.<ext>"` (and `filename*` for non-ASCII names)',
})

export class FileEditApi extends HttpApiGroup.make("fileEdit")
  .add(
    HttpApiEndpoint.post("start", "/projects/:project_id/file-edit/")
      .setPath(ProjectPath)
      .setPayload(HttpApiSchema.Multipart(FileEditUpload))
      .addSuccess(FileEditStatus, { status: 202 })
      .addError(PayloadTooLarge)
      .addError(UnsupportedMediaType)
      .annotate(
        OpenApi.Summary,
        "Fill a template from the project's resolved results (multipart field `file`, .xlsx or .docx); the job runs in the background",
      )
      .annotate(
        OpenApi.Description,
        "`{{Agent name}}` becomes the agent's resolved value (agent names match ignoring case and surrounding spaces; in a spreadsheet a cell that is only the placeholder gets a number for a number agent); `{{Agent name | Dimension=value, Other=value}}` picks one combination of dimension values. In a spreadsheet, a header row whose non-empty cells are all agent or dimension names (at least one agent) is filled below with one row per combination of dimension values, into empty rows only. A placeholder that names no agent, an agent with several results and no qualifier, an unknown dimension or value, or an agent with no result yet is listed in `problems` and left in the file as written; the job still succeeds. The file must be a real .xlsx or .docx package (else 415) of at most FILE_EDIT_MAX_BYTES (20 MB by default; else 413); at most 10,000 placeholders and 100,000 table rows (else the job fails). 409 while a job of the project runs; a finished job is replaced (its files removed).",
      ),
  )
  .add(
    HttpApiEndpoint.get("status", "/projects/:project_id/file-edit/status/")
      .setPath(ProjectPath)
      .addSuccess(FileEditStatus)
      .annotate(
        OpenApi.Summary,
        "The project's file-edit job: state (`idle` when there is none), progress, error, problems and download link",
      ),
  )
  .add(
    HttpApiEndpoint.del("clear", "/projects/:project_id/file-edit/status/")
      .setPath(ProjectPath)
      .addSuccess(HttpApiSchema.NoContent)
      .annotate(
        OpenApi.Summary,
        "Cancel a running job (its work stops, no output is kept) or clear a finished one (its files are removed); the state is then `idle`. Idempotent",
      ),
  )
  .add(
    HttpApiEndpoint.get("download", "/projects/:project_id/file-edit/download/")
      .setPath(ProjectPath)
      .addSuccess(FilledBytes)
      .annotate(OpenApi.Summary, "Download the filled file; 404 unless the project's job succeeded"),
  )
  .addError(BadRequest)
  .addError(NotFound)
  .addError(Conflict)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "File edit")
  .annotate(
    OpenApi.Description,
    "Templates (.xlsx, .docx) filled from a project's resolved results, one job per project. The contract lists these paths; their shapes are this service's.",
  ) {}
