import type { PageImage } from "@dxs/services"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"

/** Whether an `If-None-Match` header names `etag` (weak comparison, as RFC 9110 §13.1.2 asks). */
export const matchesIfNoneMatch = (header: string | undefined, etag: string): boolean => {
  if (header === undefined) return false
  if (header.trim() === "*") return true
  return header.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag)
}

/**
 * A page image, or 304 when the client's copy is current. Under `?version=` of the current version the
 * address names one drawing for good (immutable); without it the client revalidates with its ETag.
 */
export const pageImageResponse = ({ etag, immutable, png }: PageImage) => {
  const headers = {
    etag,
    "cache-control": immutable ? "private, max-age=31536000, immutable" : "private, no-cache",
    "x-content-type-options": "nosniff",
  }
  return png === undefined
    ? HttpServerResponse.empty({ status: 304, headers })
    : HttpServerResponse.uint8Array(png, { contentType: "image/png", headers })
}
