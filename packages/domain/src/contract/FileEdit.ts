/**
 * File-edit operations (api-v1.md lists the paths; their shapes are decided here): a template filled from a
 * project's resolved results, its job's state and the filled file.
 */
import { Schema } from "effect"
import { Timestamp } from "./Fields.ts"

export const FileEditState = Schema.Literal("idle", "running", "succeeded", "failed").annotations({
  description:
    "`idle`: no job (or it was cleared); `running`: the template is being filled; `succeeded`: the filled file can be downloaded; `failed`: see `error`",
})
export type FileEditState = typeof FileEditState.Type

export const FileEditProblem = Schema.Struct({
  placeholder: Schema.String.annotations({
    description: "the placeholder (or header cell) as written in the template; it is left there as written",
  }),
  location: Schema.String.annotations({
    description:
      "where it is: `Sheet1!B4` in a spreadsheet, `paragraph 12` (or `header 1, paragraph 2`) in a document",
  }),
  message: Schema.String.annotations({ description: "what is wrong and what to do about it" }),
}).annotations({ identifier: "V1FileEditProblem" })
export type FileEditProblem = typeof FileEditProblem.Type

export const FileEditStatus = Schema.Struct({
  state: FileEditState,
  template_name: Schema.NullOr(Schema.String).annotations({
    description: "the template's file name as uploaded",
  }),
  progress: Schema.Struct({
    completed: Schema.Int.annotations({ description: "placeholders and table rows filled so far" }),
    total: Schema.Int.annotations({
      description: "placeholders and table rows to fill (0 until the template is read)",
    }),
  }),
  error: Schema.NullOr(Schema.String).annotations({ description: "why the job failed; null otherwise" }),
  problems: Schema.Array(FileEditProblem).annotations({
    description:
      "placeholders that could not be filled (no such agent, an ambiguous agent, an unknown dimension or value, no result yet) and tables that could not be written; the job still succeeds",
  }),
  started_at: Schema.NullOr(Timestamp),
  finished_at: Schema.NullOr(Timestamp),
  download_url: Schema.NullOr(Schema.String).annotations({
    description:
      "the path of the filled file (`GET …/file-edit/download/`) once the job succeeded; null otherwise",
  }),
}).annotations({ identifier: "V1FileEditStatus" })
export type FileEditStatus = typeof FileEditStatus.Type

/** The status when a project has no job. */
export const idleFileEditStatus: FileEditStatus = {
  state: "idle",
  template_name: null,
  progress: { completed: 0, total: 0 },
  error: null,
  problems: [],
  started_at: null,
  finished_at: null,
  download_url: null,
}
