import { createServer } from "node:http"
import {
  Agents,
  ApiKeys,
  Dimensions,
  Documents,
  Folders,
  Launches,
  Members,
  Pages,
  Projects,
  Webhooks,
} from "@dxs/services"
import { HttpApiBuilder, HttpApiScalar, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Layer } from "effect"
import { Api } from "./Api.ts"
import { AuthenticationLive } from "./Auth.ts"
import { AgentsHttp } from "./agents/Http.ts"
import { AuthHttp } from "./auth/Http.ts"
import { DimensionsHttp } from "./dimensions/Http.ts"
import { DocumentsHttp, FilesHttp } from "./documents/Http.ts"
import { FoldersHttp } from "./folders/Http.ts"
import { KeysLive } from "./keys/Http.ts"
import { MetaHttp } from "./meta/Http.ts"
import { problemJson } from "./Problem.ts"
import { ProjectsHttp } from "./projects/Http.ts"
import { ResultsLive } from "./results/Http.ts"
import { OutputSchemaLive } from "./schema/Http.ts"
import { WebhooksHttp } from "./webhooks/Http.ts"

/** Every handler group, with the services they call. Needs Db and BlobStore. */
export const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([MetaHttp, AuthHttp, ProjectsHttp, FoldersHttp]),
  Layer.provide([AgentsHttp, DimensionsHttp]),
  Layer.provide([DocumentsHttp, FilesHttp]),
  Layer.provide(ResultsLive),
  Layer.provide(KeysLive),
  Layer.provide(OutputSchemaLive),
  Layer.provide(Layer.provide(WebhooksHttp, Webhooks.Default)),
  Layer.provide(AuthenticationLive),
  Layer.provide([ApiKeys.Default, Members.Default, Projects.Default, Folders.Default]),
  Layer.provide([Agents.Default, Dimensions.Default, Launches.Default]),
  Layer.provide(Documents.Default),
  Layer.provide(Pages.Default),
)

/** The docs page, served inline (no CDN). */
export const DocsLive = HttpApiScalar.layer({ path: "/api/v1/docs" })

/**
 * The REST API served by whatever HttpServer is provided, with `routes` (layers that add routes to the
 * API's router, like the GraphQL endpoint of the all-in-one process) beside it.
 */
export const restApiWith = <E, R>(routes: Layer.Layer<never, E, R>) =>
  HttpApiBuilder.serve(problemJson).pipe(
    Layer.provide(DocsLive),
    Layer.provide(routes),
    Layer.provide(ApiLive),
  )

/** The REST API served by whatever HttpServer is provided. */
export const RestApiLive = restApiWith(Layer.empty)

/** A Node HTTP server on `port` (0 = any free port). */
export const nodeServerLayer = (options: { readonly port: number; readonly host?: string | undefined }) =>
  NodeHttpServer.layer(createServer, { port: options.port, host: options.host ?? "0.0.0.0" })

/** The REST API as a running HTTP server on `port`. */
export const httpServerLayer = (options: { readonly port: number; readonly host?: string | undefined }) =>
  RestApiLive.pipe(HttpServer.withLogAddress, Layer.provide(nodeServerLayer(options)))
