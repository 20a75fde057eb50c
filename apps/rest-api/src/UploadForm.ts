/**
 * Reads the multipart/form-data body of an upload (`POST …/documents/`, `PUT …/file/`, `POST /extract/`)
 * with busboy instead of the framework's multipart support. We keep this reader because uploads need
 * what that one does not give: file names outside Latin-1 (RFC 7578 UTF-8 `filename`, RFC 5987
 * `filename*`), a spool folder of our own that is removed however the request ends, an immediate 400
 * for a body without its closing boundary (instead of waiting forever), and a 4xx naming the limit for
 * every limit.
 */
import { createWriteStream, type WriteStream } from "node:fs"
import type { IncomingMessage } from "node:http"
import * as path from "node:path"
import type { Readable } from "node:stream"
import {
  type Answer,
  BadRequest,
  documentFileName,
  PayloadTooLarge,
  SpoolSettings,
  spoolFolder,
} from "@dxs/services"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import busboy from "busboy"
import { Effect, Either } from "effect"

export interface UploadFormLimits {
  /** The fields that carry files, each with the most files it may carry. */
  readonly files: Readonly<Record<string, number>>
  /** The largest file, in bytes (413 above). */
  readonly maxFileBytes: number
  /** The most parts (files and text fields together). */
  readonly maxParts: number
  /** The most text fields. */
  readonly maxFields: number
  /** The largest text field, in bytes (413 above). */
  readonly maxFieldBytes: number
  /** The 400 for a body that is not multipart/form-data. */
  readonly notMultipart: string
}

/** A file part, spooled to disk under a name of our own. */
export interface FormFile {
  readonly field: string
  readonly path: string
  /** The client's file name, as sent (directory parts included); `documentFileName` makes it a document's. */
  readonly name: string
  readonly contentType: string
  readonly size: number
}

export interface UploadForm {
  readonly files: ReadonlyArray<FormFile>
  /** The text fields, each with its values in the order sent. */
  readonly fields: ReadonlyMap<string, ReadonlyArray<string>>
}

/** The largest text field of an upload form (`tags`; `schema` of `/extract/`), in bytes. */
export const UPLOAD_FIELD_MAX_BYTES = 1024 * 1024

/** Above this many bytes of an abandoned body, the connection is cut instead of read to its end. */
const DISCARD_AT_MOST = 64 * 1024 * 1024

/**
 * After refusing a body half way, read and discard the rest, so the client gets to read the answer and its
 * connection stays usable; a client that keeps sending far beyond the limit is cut off.
 */
const discardRest = (incoming: IncomingMessage, maxBytes: number) => {
  if (incoming.readableEnded || incoming.destroyed) return
  const cap = Math.max(maxBytes, DISCARD_AT_MOST)
  let discarded = 0
  incoming.on("data", (chunk: Buffer) => {
    discarded += chunk.length
    if (discarded > cap) incoming.destroy()
  })
  incoming.resume()
}

const malformed = (reason: string) =>
  BadRequest.of(`The multipart body is malformed: ${reason}`, [{ path: "body", message: reason }])

const describeParserError = (message: string) =>
  message === "Unexpected end of form"
    ? "it ends before its closing boundary"
    : message === "Malformed part header"
      ? "a part's headers are malformed (or larger than 16 KB)"
      : message

/**
 * Reads the body into a spool folder of this process (removed when the surrounding scope closes: the
 * request answered, failed, or its client gone). Files are written under numbers, never under a name
 * the client chose; a file's name is checked (`documentFileName`) as soon as its part starts.
 */
export const readUploadForm = (request: HttpServerRequest.HttpServerRequest, limits: UploadFormLimits) =>
  Effect.gen(function* () {
    const contentType = request.headers["content-type"] ?? ""
    if (!/^multipart\/form-data\b/i.test(contentType.trim())) return yield* BadRequest.of(limits.notMultipart)
    const { root } = yield* SpoolSettings
    const dir = yield* spoolFolder(root)
    return yield* parse(NodeHttpServerRequest.toIncomingMessage(request), dir, limits)
  })

type Refusal = BadRequest | PayloadTooLarge

/** The parser of the body, or the 400 for headers it cannot read (a missing boundary, for one). */
const openParser = (
  incoming: IncomingMessage,
  limits: UploadFormLimits,
): Either.Either<busboy.Busboy, Refusal> => {
  try {
    return Either.right(
      busboy({
        headers: incoming.headers,
        defParamCharset: "utf8",
        defCharset: "utf8",
        // Directory parts are dropped by `documentFileName`, the one rule for names.
        preservePath: true,
        // The parser calls a part "over the limit" once it reaches it: one byte more tells a part at the
        // limit from one above it.
        limits: {
          fileSize: limits.maxFileBytes + 1,
          // Counted here as each part starts; the parser's own count also trips on a body of exactly this many.
          parts: limits.maxParts + 1,
          fields: limits.maxFields,
          fieldSize: limits.maxFieldBytes + 1,
          headerPairs: 32,
        },
      }),
    )
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e)
    return Either.left(
      /boundary/i.test(message)
        ? BadRequest.of(
            "The multipart body has no boundary: send Content-Type: multipart/form-data; boundary=…",
            [{ path: "content-type", message: "boundary is missing" }],
          )
        : malformed(message),
    )
  }
}

/**
 * Stops reading: the parser and every file write end. Resolves once every write has closed, so none
 * recreates a file in the spool folder after it is removed.
 */
const stopReading = (incoming: IncomingMessage, parser: busboy.Busboy, sinks: ReadonlyArray<WriteStream>) => {
  incoming.unpipe(parser)
  // Not from inside the parser's own event handlers, which go on using its state after they return.
  setImmediate(() => {
    parser.removeAllListeners()
    // A parser error after this point has nobody to tell.
    parser.on("error", () => undefined)
    parser.destroy()
    for (const sink of sinks) sink.destroy()
  })
  return Promise.all(
    sinks.map(
      (sink) =>
        new Promise<void>((resolve) => (sink.closed ? resolve() : sink.once("close", () => resolve()))),
    ),
  )
}

/** A body being read: what its parts have given so far, and whether its reading has ended. */
interface FormReading {
  readonly dir: string
  readonly limits: UploadFormLimits
  readonly files: Array<FormFile>
  readonly fields: Map<string, Array<string>>
  /** Each file's write to the spool folder. */
  readonly writes: Array<Promise<void>>
  readonly sinks: Array<WriteStream>
  /** Files received so far in each file field. */
  readonly perField: Map<string, number>
  parts: number
  done: boolean
  /** Refuses the body: the rest of it is read and dropped, so the client reads the answer. */
  readonly fail: (refusal: Refusal) => void
}

const tooManyParts = ({ fail, limits }: FormReading) =>
  fail(
    BadRequest.of(`The multipart body has more than ${limits.maxParts} parts`, [
      { path: "body", message: `at most ${limits.maxParts} parts` },
    ]),
  )

/** A file part: refused, skipped (not a file field, or the body refused already), or spooled under a number. */
const receiveFile = (form: FormReading, field: string, stream: Readable, info: busboy.FileInfo) => {
  const { limits, fail, files } = form
  // An unfinished body also ends each open file stream with an error: the parser reports it once.
  stream.on("error", () => undefined)
  if (++form.parts > limits.maxParts) tooManyParts(form)
  const max = limits.files[field]
  if (max === undefined || form.done) {
    stream.resume()
    return
  }
  const count = (form.perField.get(field) ?? 0) + 1
  form.perField.set(field, count)
  if (count > max)
    return fail(
      max === 1
        ? BadRequest.of(`Upload one file per request in field \`${field}\``, [
            { path: field, message: "must be a single file" },
          ])
        : BadRequest.of(`At most ${max} files per request in \`${field}\``, [
            { path: field, message: `must be at most ${max} files` },
          ]),
    )
  const name = info.filename ?? ""
  const checked = Effect.runSync(Effect.either(documentFileName(name, field)))
  if (checked._tag === "Left") return fail(checked.left)
  const target = path.join(form.dir, String(files.length + 1))
  const file = { field, path: target, name, contentType: info.mimeType, size: 0 }
  files.push(file)
  const sink = createWriteStream(target, { flags: "wx", mode: 0o600 })
  form.sinks.push(sink)
  stream.on("data", (chunk: Buffer) => {
    file.size += chunk.length
  })
  stream.on("limit", () =>
    fail(PayloadTooLarge.of(`The file is larger than the limit of ${limits.maxFileBytes} bytes`)),
  )
  const written = new Promise<void>((resolve, reject) => {
    sink.on("finish", resolve)
    sink.on("close", resolve)
    sink.on("error", reject)
  })
  // Awaited only when the whole body was read; a write cut short by a refusal is nobody's error.
  written.catch(() => undefined)
  form.writes.push(written)
  stream.pipe(sink)
}

/** A text field: refused (a file field without a file, a name or a value over its limit), or kept. */
const receiveField = (form: FormReading, field: string, value: string, info: busboy.FieldInfo) => {
  const { limits, fail } = form
  if (++form.parts > limits.maxParts) tooManyParts(form)
  if (form.done) return
  if (limits.files[field] !== undefined)
    return fail(
      BadRequest.of(`The multipart field \`${field}\` must be a file, with a file name`, [
        { path: field, message: "must be a file" },
      ]),
    )
  if (info.nameTruncated) return fail(malformed("a field name is longer than 100 bytes"))
  if (info.valueTruncated)
    return fail(
      PayloadTooLarge.of(`The field \`${field}\` is larger than the limit of ${limits.maxFieldBytes} bytes`),
    )
  const values = form.fields.get(field) ?? []
  values.push(value)
  form.fields.set(field, values)
}

const parse = (incoming: IncomingMessage, dir: string, limits: UploadFormLimits) =>
  Effect.async<UploadForm, Refusal>((resume) => {
    const opened = openParser(incoming, limits)
    if (Either.isLeft(opened)) {
      resume(opened.left)
      return
    }
    const parser = opened.right
    const sinks: Array<WriteStream> = []
    const stop = () => stopReading(incoming, parser, sinks)
    const form: FormReading = {
      dir,
      limits,
      files: [],
      fields: new Map(),
      writes: [],
      sinks,
      perField: new Map(),
      parts: 0,
      done: false,
      fail: (refusal) => {
        if (form.done) return
        form.done = true
        const stopped = stop()
        discardRest(incoming, limits.maxFileBytes)
        void stopped.then(() => resume(refusal))
      },
    }

    parser.on("file", (field, stream, info) => receiveFile(form, field, stream, info))
    parser.on("field", (field, value, info) => receiveField(form, field, value, info))
    parser.on("partsLimit", () => tooManyParts(form))
    parser.on("fieldsLimit", () =>
      form.fail(
        BadRequest.of(`The multipart body has more than ${limits.maxFields} text fields`, [
          { path: "body", message: `at most ${limits.maxFields} text fields` },
        ]),
      ),
    )
    parser.on("error", (e: Error) => form.fail(malformed(describeParserError(e.message))))
    parser.on("close", () => {
      if (form.done) return
      Promise.all(form.writes).then(
        () => {
          if (form.done) return
          form.done = true
          resume(Effect.succeed({ files: form.files, fields: form.fields }))
        },
        (e: unknown) => {
          if (form.done) return
          form.done = true
          void stop().then(() => resume(Effect.die(e)))
        },
      )
    })
    // A client gone mid-body: the request's fiber is interrupted, and the canceller below cleans up.
    incoming.on("error", () => undefined)
    incoming.pipe(parser)

    return Effect.promise(() => {
      form.done = true
      return stop()
    })
  })

/** An upload's answer; one given again for a repeated Idempotency-Key says so (`Idempotent-Replayed`). */
export const answerResponse = (answer: Answer<unknown>) =>
  HttpServerResponse.unsafeJson(answer.body, {
    status: answer.status,
    ...(answer.replayed ? { headers: { "idempotent-replayed": "true" } } : {}),
  })
