/**
 * The docs page at /api/v1/docs: Scalar's API reference over the API's OpenAPI description, served inline
 * (no CDN, and the system's fonts rather than Scalar's hosted ones).
 *
 * Why not `HttpApiScalar.layer` of @effect/platform: it builds the page (with Scalar's 6.5 MB script) when
 * the server starts and keeps it, and its module holds the script's source besides: about 20 MB of every
 * process's heap for a page most processes never serve. Here the script is loaded on the first request for
 * the page, from the module that the layer itself uses (of the pinned @effect/platform, beside its public
 * `HttpApiScalar`), and the page built then is kept for the next ones.
 */
import { createRequire } from "node:module"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import { Effect } from "effect"

export const DOCS_PATH = "/api/v1/docs"

/** JSON inside a script element: nothing in it can end the element or break a string literal. */
const scriptJson = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/[\u2028\u2029]/g, (c) => (c === "\u2028" ? "\\u2028" : "\\u2029"))

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
const escapeAttribute = (s: string) => escapeHtml(s).replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/** Scalar's standalone script, as @effect/platform ships it. */
const scalarScript = Effect.promise(async () => {
  const root = path.dirname(createRequire(import.meta.url).resolve("@effect/platform/package.json"))
  const module = pathToFileURL(path.join(root, "dist", "esm", "internal", "httpApiScalar.js"))
  return ((await import(module.href)) as { readonly javascript: string }).javascript
})

const page = (spec: OpenApi.OpenAPISpec, script: string) => {
  const description = spec.info.description
  const meta =
    description === undefined || description === ""
      ? ""
      : `<meta name="description" content="${escapeAttribute(description)}"/>
    <meta name="og:description" content="${escapeAttribute(description)}"/>`
  return `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <title>${escapeHtml(spec.info.title)}</title>
    ${meta}
    <meta name="viewport" content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <script id="api-reference" type="application/json">
      ${scriptJson(spec)}
    </script>
    <script>
      document.getElementById('api-reference').dataset.configuration = JSON.stringify(${scriptJson({ _integration: "html", withDefaultFonts: false })})
    </script>
    <script>${script}</script>
  </body>
</html>`
}

/** The route of the docs page, on the API's router. */
export const DocsLive = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const { api } = yield* HttpApi.Api
    const html = yield* Effect.cached(
      Effect.map(scalarScript, (script) => page(OpenApi.fromApi(api), script)),
    )
    yield* router.get(
      DOCS_PATH,
      Effect.map(html, (body) => HttpServerResponse.html(body)),
    )
  }),
)
