import { FileEdit } from "@dxs/services"
import { Effect } from "effect"
import type { GraphqlContext } from "./Context.ts"

/**
 * A project's file-edit job (a template filled from its resolved results) as REST serves it: its status
 * (GET …/file-edit/status/) and cancelling or clearing it (DELETE …/file-edit/status/), through the same
 * service. The template itself is uploaded, and the filled file downloaded, through REST (multipart and
 * bytes are not GraphQL's): POST /projects/{id}/file-edit/ and the status's `download_url`.
 */
export const fileEditTypeDefs = /* GraphQL */ `
  "A placeholder of the template that could not be filled (the job still succeeds)."
  type FileEditProblem {
    "The placeholder (or header cell) as written in the template; it is left there as written."
    placeholder: String!
    "Where it is: Sheet1!B4 in a spreadsheet, paragraph 12 in a document."
    location: String!
    message: String!
  }

  "Placeholders and table rows filled so far, of how many (0 until the template is read)."
  type FileEditProgress {
    completed: Int!
    total: Int!
  }

  "The state of a project's file-edit job (REST GET …/file-edit/status/)."
  type FileEditStatus {
    "idle (no job, or it was cleared), running, succeeded (the filled file can be downloaded) or failed."
    state: String!
    template_name: String
    progress: FileEditProgress!
    "Why the job failed; null otherwise."
    error: String
    problems: [FileEditProblem!]!
    started_at: String
    finished_at: String
    "The REST path of the filled file once the job succeeded (GET …/file-edit/download/); null otherwise."
    download_url: String
  }

  extend type Query {
    """
    The project's file-edit job (REST GET …/file-edit/status/). A template is uploaded through REST
    multipart: POST /projects/{id}/file-edit/.
    """
    fileEditStatus(projectId: ID!): FileEditStatus!
  }

  extend type Mutation {
    """
    Cancel the project's running file-edit job, or clear a finished one with its files (REST DELETE
    …/file-edit/status/); true also when there was none.
    """
    clearFileEdit(projectId: ID!): Boolean!
  }
`

export const fileEditResolvers = {
  Query: {
    fileEditStatus: (_: unknown, args: { projectId: string }, ctx: GraphqlContext) =>
      ctx.run(Effect.flatMap(FileEdit, (f) => f.status(args.projectId))),
  },
  Mutation: {
    clearFileEdit: (_: unknown, args: { projectId: string }, ctx: GraphqlContext) =>
      ctx.run(
        Effect.as(
          Effect.flatMap(FileEdit, (f) => f.clear(args.projectId)),
          true,
        ),
      ),
  },
}
