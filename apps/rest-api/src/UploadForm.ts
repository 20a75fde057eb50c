/**
 * Reads the multipart/form-data body of an upload (`POST …/documents/`, `PUT …/file/`, `POST /extract/`)
 * with busboy instead of the framework's multipart support. We keep this reader because uploads need
 * what that one does not give: file names outside Latin-1 (RFC 7578 UTF-8 `filename`, RFC 5987
 * `filename*`), a spool folder of our own that is removed however the request ends, an immediate 400
 * for a body without its closing boundary (instead of waiting forever), and a 4xx naming the limit for
 * every limit.
 */
import { createWriteStream } from "node:fs"
import * as path from "node:path"
import {
  type Answer,
  BadRequest,
  documentFileName,
  PayloadTooLarge,
  SpoolSettings,
  spoolFolder,
} from "@dxs/services"
import { type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import busboy from "busboy"
import { Effect } from "effect"

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
const discardRest = (incoming: import("node:http").IncomingMessage, maxBytes: number) => {
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

const parse = (incoming: import("node:http").IncomingMessage, dir: string, limits: UploadFormLimits) =>
  Effect.async<UploadForm, Refusal>((resume) => {
    let parser: busboy.Busboy
    try {
      parser = busboy({
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
      })
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e)
      resume(
        /boundary/i.test(message)
          ? BadRequest.of(
              "The multipart body has no boundary: send Content-Type: multipart/form-data; boundary=…",
              [{ path: "content-type", message: "boundary is missing" }],
            )
          : malformed(message),
      )
      return
    }

    const files: Array<FormFile> = []
    const fields = new Map<string, Array<string>>()
    const writes: Array<Promise<void>> = []
    const sinks: Array<import("node:fs").WriteStream> = []
    const perField = new Map<string, number>()
    let parts = 0
    let done = false

    /**
     * Stops reading: the parser and every file write end. Resolves once every write has closed, so none
     * recreates a file in the spool folder after it is removed.
     */
    const stop = () => {
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
    /** Refuses the body: the rest of it is read and dropped, so the client reads the answer. */
    const fail = (refusal: Refusal) => {
      if (done) return
      done = true
      const stopped = stop()
      discardRest(incoming, limits.maxFileBytes)
      void stopped.then(() => resume(refusal))
    }

    const tooManyParts = () =>
      fail(
        BadRequest.of(`The multipart body has more than ${limits.maxParts} parts`, [
          { path: "body", message: `at most ${limits.maxParts} parts` },
        ]),
      )

    parser.on("file", (field, stream, info) => {
      // An unfinished body also ends each open file stream with an error: the parser reports it once.
      stream.on("error", () => undefined)
      if (++parts > limits.maxParts) tooManyParts()
      const max = limits.files[field]
      if (max === undefined || done) {
        stream.resume()
        return
      }
      const count = (perField.get(field) ?? 0) + 1
      perField.set(field, count)
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
      const target = path.join(dir, String(files.length + 1))
      const file = { field, path: target, name, contentType: info.mimeType, size: 0 }
      files.push(file)
      const sink = createWriteStream(target, { flags: "wx", mode: 0o600 })
      sinks.push(sink)
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
      writes.push(written)
      stream.pipe(sink)
    })
    parser.on("field", (field, value, info) => {
      if (++parts > limits.maxParts) tooManyParts()
      if (done) return
      if (limits.files[field] !== undefined)
        return fail(
          BadRequest.of(`The multipart field \`${field}\` must be a file, with a file name`, [
            { path: field, message: "must be a file" },
          ]),
        )
      if (info.nameTruncated) return fail(malformed("a field name is longer than 100 bytes"))
      if (info.valueTruncated)
        return fail(
          PayloadTooLarge.of(
            `The field \`${field}\` is larger than the limit of ${limits.maxFieldBytes} bytes`,
          ),
        )
      const values = fields.get(field) ?? []
      values.push(value)
      fields.set(field, values)
    })
    parser.on("partsLimit", tooManyParts)
    parser.on("fieldsLimit", () =>
      fail(
        BadRequest.of(`The multipart body has more than ${limits.maxFields} text fields`, [
          { path: "body", message: `at most ${limits.maxFields} text fields` },
        ]),
      ),
    )
    parser.on("error", (e: Error) => fail(malformed(describeParserError(e.message))))
    parser.on("close", () => {
      if (done) return
      Promise.all(writes).then(
        () => {
          if (done) return
          done = true
          resume(Effect.succeed({ files, fields }))
        },
        (e: unknown) => {
          if (done) return
          done = true
          void stop().then(() => resume(Effect.die(e)))
        },
      )
    })
    // A client gone mid-body: the request's fiber is interrupted, and the canceller below cleans up.
    incoming.on("error", () => undefined)
    incoming.pipe(parser)

    return Effect.promise(() => {
      done = true
      return stop()
    })
  })

/** An upload's answer; one given again for a repeated Idempotency-Key says so (`Idempotent-Replayed`). */
export const answerResponse = (answer: Answer<unknown>) =>
  HttpServerResponse.unsafeJson(answer.body, {
    status: answer.status,
    ...(answer.replayed ? { headers: { "idempotent-replayed": "true" } } : {}),
  })
