import { createServer } from "node:http"
import {
  defaultHttpServerSettings,
  drainOnClose,
  type HttpServerSettings,
  limitServer,
  requestAuthenticator,
  serverOptions,
} from "@dxs/services"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer } from "effect"
import { Api } from "./Api.ts"
import { AuthenticationLive } from "./Auth.ts"
import { AgentsHttp } from "./agents/Http.ts"
import { AuthHttp } from "./auth/Http.ts"
import { DocsLive } from "./Docs.ts"
import { DimensionsHttp } from "./dimensions/Http.ts"
import { DocumentsHttp, FilesHttp } from "./documents/Http.ts"
import { FileEditHttp } from "./fileedit/Http.ts"
import { FoldersHttp } from "./folders/Http.ts"
import { guard } from "./Guard.ts"
import { HealthLive } from "./Health.ts"
import { KeysHttp } from "./keys/Http.ts"
import { MetaHttp } from "./meta/Http.ts"
import { OutageAnswersLive } from "./Outage.ts"
import { problemJson } from "./Problem.ts"
import { ProjectsHttp } from "./projects/Http.ts"
import { ResultsHttp } from "./results/Http.ts"
import { RunsHttp } from "./runs/Http.ts"
import { OutputSchemaHttp } from "./schema/Http.ts"
import { WebhooksHttp } from "./webhooks/Http.ts"

/** Every handler group. Needs the services (`servicesLayer` of @dxs/services). */
export const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([MetaHttp, AuthHttp, ProjectsHttp, FoldersHttp]),
  Layer.provide([AgentsHttp, DimensionsHttp, RunsHttp]),
  Layer.provide([DocumentsHttp, FilesHttp]),
  Layer.provide(ResultsHttp),
  Layer.provide(KeysHttp),
  Layer.provide(OutputSchemaHttp),
  Layer.provide(FileEditHttp),
  Layer.provide(WebhooksHttp),
  Layer.provide(AuthenticationLive),
)

/**
 * The REST API served by whatever HttpServer is provided, with `routes` (layers that add routes to the
 * API's router, like the GraphQL endpoint of the all-in-one process) beside it.
 */
export const restApiWith = <E, R>(routes: Layer.Layer<never, E, R>) =>
  Layer.unwrapEffect(
    Effect.map(requestAuthenticator, (authenticator) =>
      HttpApiBuilder.serve((app) => problemJson(guard(app, authenticator))),
    ),
  ).pipe(
    // No span per request: nothing exports traces, and the span's attributes (the URL parsed again, every
    // header copied and redacted) were a measurable part of each request's CPU.
    HttpMiddleware.withTracerDisabledWhen(() => true),
    Layer.provide(OutageAnswersLive),
    Layer.provide(HealthLive),
    Layer.provide(DocsLive),
    Layer.provide(routes),
    Layer.provide(ApiLive),
  )

/** The REST API served by whatever HttpServer is provided, over the services provided. */
export const RestApiLive = restApiWith(Layer.empty)

export interface ServerOptions {
  readonly port: number
  readonly host?: string | undefined
  /** Timeouts and connections per client (default: `defaultHttpServerSettings`). */
  readonly http?: HttpServerSettings | undefined
  /** On shutdown, how long in-flight requests may finish before their connections are closed (default 10 s). */
  readonly shutdownGraceMs?: number | undefined
}

/** A Node HTTP server on `port` (0 = any free port), under the HTTP limits. */
export const nodeServerLayer = (options: ServerOptions) => {
  const settings = options.http ?? defaultHttpServerSettings
  return NodeHttpServer.layer(
    () =>
      drainOnClose(
        limitServer(createServer(serverOptions(settings)), settings),
        options.shutdownGraceMs ?? 10_000,
      ),
    {
      port: options.port,
      host: options.host ?? "0.0.0.0",
    },
  )
}

/** The REST API as a running HTTP server on `port`, over the services provided. */
export const httpServerLayer = (options: ServerOptions) =>
  RestApiLive.pipe(HttpServer.withLogAddress, Layer.provide(nodeServerLayer(options)))
