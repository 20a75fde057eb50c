import { promises as fs } from "node:fs"
import * as path from "node:path"
import { problemType } from "@dxs/services"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect } from "effect"

/** Content types of the files a built web application holds. */
const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2",
  ".map": "application/json",
}

/** Everything the application loads comes from this server; page images are fetched as blobs. */
const CSP =
  "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'"

const notFound = () =>
  HttpServerResponse.text(
    JSON.stringify({
      type: problemType("not-found"),
      title: "Not found",
      status: 404,
      detail: "No such endpoint",
    }),
    { status: 404, contentType: "application/problem+json" },
  )

/**
 * The built web application (a directory with `index.html` and `assets/`) served at the site's root:
 * files as they are (hashed assets cached for a year), any other path the application's `index.html`
 * (its router decides), and `/api/…` and `/graphql` paths that no endpoint took stay 404 problems.
 */
export const webAppRoute = (dir: string) =>
  HttpApiBuilder.Router.use((router) =>
    router.get(
      "*",
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const pathname = decodeURIComponent(new URL(request.url, "http://x").pathname)
        if (pathname.startsWith("/api/") || pathname === "/api" || pathname.startsWith("/graphql"))
          return notFound()
        const root = path.resolve(dir)
        const wanted = path.resolve(root, `.${path.posix.normalize(pathname)}`)
        const inside = wanted === root || wanted.startsWith(root + path.sep)
        const file = inside && pathname !== "/" ? wanted : path.join(root, "index.html")
        const found = yield* Effect.promise(() =>
          fs.readFile(file).then(
            (bytes) => ({ file, bytes }),
            () => fs.readFile(path.join(root, "index.html")).then((bytes) => ({ file: "index.html", bytes })),
          ),
        )
        const extension = path.extname(found.file)
        return HttpServerResponse.uint8Array(found.bytes, {
          contentType: TYPES[extension] ?? "application/octet-stream",
          headers: {
            "cache-control": pathname.startsWith("/assets/")
              ? "public, max-age=31536000, immutable"
              : "no-cache",
            "x-content-type-options": "nosniff",
            ...(extension === ".html"
              ? { "content-security-policy": CSP, "referrer-policy": "same-origin" }
              : {}),
          },
        })
      }),
    ),
  )
