/**
 * Files sent as downloads (a document's bytes, a filled template, a results export): an `attachment` with
 * the file's name, never sniffed by the browser nor kept in a shared cache.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Effect, Stream } from "effect"

/** `attachment` with the name in RFC 5987 form (any characters) and an ASCII fallback for old clients. */
export const contentDisposition = (fileName: string) => {
  const fallback = fileName.replace(/[^\x20-\x7e]|["\\]/g, "_")
  const encoded = encodeURIComponent(fileName).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  )
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`
}

const downloadHeaders = (fileName: string) => ({
  "content-disposition": contentDisposition(fileName),
  "x-content-type-options": "nosniff",
  "cache-control": "private, no-store",
})

/** A stored file of known size (its bytes as a Node stream) as a download. */
export const fileDownload = (file: {
  readonly stream: unknown
  readonly contentType: string
  readonly size: number
  readonly fileName: string
}) =>
  HttpServerResponse.raw(file.stream, {
    contentType: file.contentType,
    contentLength: file.size,
    headers: downloadHeaders(file.fileName),
  })

/**
 * A file written while it is sent (its size unknown until the end) as a download. When making it fails
 * after the answer has started, the connection is aborted: the client sees a broken transfer, never a
 * complete 200 holding part of the file (the platform would end the chunked answer normally).
 */
export const streamedDownload = <E>(file: {
  readonly body: Stream.Stream<Uint8Array, E>
  readonly contentType: string
  readonly fileName: string
}) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
    HttpServerResponse.stream(
      Stream.tapErrorCause(file.body, () =>
        Effect.sync(() => NodeHttpServerRequest.toServerResponse(request).destroy()),
      ),
      { contentType: file.contentType, headers: downloadHeaders(file.fileName) },
    ),
  )
