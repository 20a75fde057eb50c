/**
 * The Idempotency-Key rule of uploads and `POST /extract/`: the first successful answer for a key (per
 * organisation and operation) is given again to a repeated request for 24 hours; the same key with a
 * different request is refused (422). The answer is remembered in the transaction that does the work,
 * under a unique index, so two requests with one key at once do the work once.
 */
import { createHash } from "node:crypto"
import {
  type Conn,
  claimIdempotencyKey,
  findRememberedAnswer,
  type IdempotencyScope,
  rememberAnswer,
} from "@dxs/db"
import { Data, Effect } from "effect"
import { Unprocessable } from "./Errors.ts"

export const IDEMPOTENCY_KEY_MAX_LENGTH = 255
/** 1-255 printable ASCII characters (space included). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/

export type IdempotentOperation = "document-upload" | "extract"

/** A request sent with an Idempotency-Key: where the key applies, and what identifies the request. */
export interface IdempotentRequest extends IdempotencyScope {
  /** SHA-256 of the request's identifying parts (target, file digests, fields). */
  readonly fingerprint: string
}

/** An answer: the work's own, or one given earlier for the same key (`replayed`). */
export interface Answer<A> {
  readonly status: number
  readonly body: A
  readonly replayed: boolean
}

export const idempotentRequest = (
  organizationId: string,
  operation: IdempotentOperation,
  key: string | undefined,
  identifying: unknown,
): IdempotentRequest | undefined =>
  key === undefined
    ? undefined
    : {
        organizationId,
        operation,
        key,
        fingerprint: createHash("sha256").update(JSON.stringify(identifying)).digest("hex"),
      }

/** Another request with the same key committed first: its answer, to be given again. */
export class AnsweredBefore extends Data.TaggedError("AnsweredBefore")<{
  readonly status: number
  readonly body: unknown
}> {}

const reusedKey = (request: IdempotentRequest) =>
  Unprocessable.of(
    `The Idempotency-Key "${request.key}" was already used for a different request in the last 24 hours; use a new key for a new request`,
  )

/** The answer remembered for the request's key: given again when the request is the same, else 422. */
export const earlierAnswer = (db: Conn, request: IdempotentRequest | undefined) =>
  Effect.gen(function* () {
    if (request === undefined) return undefined
    const earlier = yield* Effect.promise(() => findRememberedAnswer(db, request))
    if (earlier === undefined) return undefined
    if (earlier.fingerprint !== request.fingerprint) return yield* reusedKey(request)
    return { status: earlier.status, body: earlier.body, replayed: true } satisfies Answer<unknown>
  })

/**
 * First in the transaction that does the work: takes the key. When a concurrent request with the same key
 * committed meanwhile, fails with `AnsweredBefore` (its answer) or 422, so this transaction rolls back.
 */
export const claimKey = (trx: Conn, request: IdempotentRequest | undefined) =>
  Effect.gen(function* () {
    if (request === undefined) return
    if (yield* Effect.promise(() => claimIdempotencyKey(trx, request, request.fingerprint))) return
    const earlier = yield* earlierAnswer(trx, request)
    // Held by an answer that expired and was swept between the two statements: a retry finds the key free.
    if (earlier === undefined)
      return yield* Unprocessable.of(
        `The Idempotency-Key "${request.key}" is being used by another request; retry in a moment`,
      )
    return yield* new AnsweredBefore({ status: earlier.status, body: earlier.body })
  })

/** Last in the transaction that does the work: the answer to give again. */
export const rememberKey = (
  trx: Conn,
  request: IdempotentRequest | undefined,
  status: number,
  body: unknown,
) =>
  request === undefined ? Effect.void : Effect.promise(() => rememberAnswer(trx, request, { status, body }))
