/**
 * Input rules every use-case shares (the adapters' own checks are a first line only; GraphQL and REST
 * both reach these).
 */
import { nameIssue } from "@dxs/domain/Limits"
import { Effect } from "effect"
import { BadRequest } from "./Errors.ts"

/**
 * A name of a project, folder, agent, dimension or webhook: not empty, at most MAX_NAME_LENGTH
 * characters, no NUL. `undefined` passes unless `required` (a PATCH that leaves the name alone).
 */
export const validName = (name: string | undefined, path = "name", required = false) => {
  if (name === undefined)
    return required
      ? Effect.fail(BadRequest.of(`${path} must not be empty`, [{ path, message: "must not be empty" }]))
      : Effect.void
  const issue = nameIssue(name, path)
  return issue === undefined
    ? Effect.void
    : Effect.fail(BadRequest.of(`${issue.path} ${issue.message}`, [issue]))
}
