/**
 * The document state machine of the spec ("States and transitions"):
 *
 * | from      | event          | to        | version   |
 * |-----------|----------------|-----------|-----------|
 * | (upload)  | upload         | Pending   | 1         |
 * | Pending   | ParseSucceeded | Processed | unchanged |
 * | Pending   | ParseFailed    | Failed    | unchanged |
 * | Processed | Reprocess      | Pending   | +1        |
 * | Failed    | Reprocess      | Pending   | +1        |
 *
 * `Reprocess` covers both a replacement upload and a reprocess request. Parse outcomes name the version
 * they parsed, so the outcome of a parse of an older version (the file was replaced meanwhile) is refused.
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import type { DocumentStatus } from "./Enums.ts"

export interface DocumentState {
  readonly status: DocumentStatus
  readonly version: number
}

export type DocumentEvent = Data.TaggedEnum<{
  /** Parsing of `version` completed. */
  ParseSucceeded: { readonly version: number }
  /** Parsing of `version` cannot complete. */
  ParseFailed: { readonly version: number }
  /** The file was replaced or reprocessing was requested. */
  Reprocess: {}
}>
export const DocumentEvent = Data.taggedEnum<DocumentEvent>()

export class InvalidTransition extends Data.TaggedError("InvalidTransition")<{
  readonly from: DocumentStatus
  readonly event: DocumentEvent["_tag"]
  readonly reason: "not_allowed" | "stale_version"
  readonly message: string
}> {}

/** The state of a freshly uploaded document: `Pending`, version 1; parsing runs asynchronously. */
export const uploadedDocument = (): DocumentState => ({ status: "Pending", version: 1 })

const notAllowed = (state: DocumentState, event: DocumentEvent): InvalidTransition =>
  new InvalidTransition({
    from: state.status,
    event: event._tag,
    reason: "not_allowed",
    message: `A document in status ${state.status} cannot take the event ${event._tag}`,
  })

const staleVersion = (state: DocumentState, event: DocumentEvent, version: number): InvalidTransition =>
  new InvalidTransition({
    from: state.status,
    event: event._tag,
    reason: "stale_version",
    message: `${event._tag} is for version ${version} but the document is at version ${state.version}`,
  })

const parseOutcome = (
  state: DocumentState,
  event: DocumentEvent,
  version: number,
  next: DocumentStatus,
): Either.Either<DocumentState, InvalidTransition> => {
  if (state.status !== "Pending") return Either.left(notAllowed(state, event))
  if (version !== state.version) return Either.left(staleVersion(state, event, version))
  return Either.right({ status: next, version: state.version })
}

/** The next state of a document after an event, or why the event is not allowed in its current state. */
export const transitionDocument = (
  state: DocumentState,
  event: DocumentEvent,
): Either.Either<DocumentState, InvalidTransition> => {
  switch (event._tag) {
    case "ParseSucceeded":
      return parseOutcome(state, event, event.version, "Processed")
    case "ParseFailed":
      return parseOutcome(state, event, event.version, "Failed")
    case "Reprocess":
      return state.status === "Pending"
        ? Either.left(notAllowed(state, event))
        : Either.right({ status: "Pending", version: state.version + 1 })
  }
}

/** True when a launch must be rejected because of this document (spec: launch rejected while a file failed). */
export const blocksLaunch = (state: Pick<DocumentState, "status">): boolean => state.status === "Failed"
