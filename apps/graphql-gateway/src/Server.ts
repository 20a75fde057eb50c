import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { DEFAULT_MAX_JSON_BYTES, DEFAULT_MAX_JSON_DEPTH } from "@dxs/domain/Limits"
import {
  CSRF_HEADER,
  defaultHttpServerSettings,
  drainOnClose,
  type HttpServerSettings,
  limitServer,
  ProgressFeed,
  SESSION_COOKIE,
  type ServicesOptions,
  serverOptions,
  servicesLayer,
} from "@dxs/services"
import * as Cookies from "@effect/platform/Cookies"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpBody from "@effect/platform/HttpBody"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Exit, ManagedRuntime, Option, Stream } from "effect"
import {
  type ASTVisitor,
  type FragmentDefinitionNode,
  GraphQLError,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
} from "graphql"
import { createYoga, maskError as defaultMaskError, type Plugin } from "graphql-yoga"
import { complexityLimit, MAX_COST } from "./Complexity.ts"
import { type GatewayRuntime, type GraphqlContext, makeContext, toGraphQLError } from "./Context.ts"
import { type GraphqlInputLimits, inputLimitsPlugin } from "./InputLimits.ts"
import { type GatewayLogging, gatewayLogger } from "./Logging.ts"
import { schema } from "./Schema.ts"

const defaultGraphqlInputLimits: GraphqlInputLimits = {
  maxJsonBytes: DEFAULT_MAX_JSON_BYTES,
  maxJsonDepth: DEFAULT_MAX_JSON_DEPTH,
}

/** Queries nested deeper than this many fields are rejected before they run. */
export const MAX_DEPTH = 10

const depthOf = (
  set: SelectionSetNode | undefined,
  fragments: (name: string) => FragmentDefinitionNode | null | undefined,
  seen: ReadonlySet<string>,
): number => {
  if (!set) return 0
  let max = 0
  for (const selection of set.selections) {
    if (selection.kind === "Field") {
      const name = selection.name.value
      if (name.startsWith("__")) continue
      max = Math.max(max, 1 + depthOf(selection.selectionSet, fragments, seen))
    } else if (selection.kind === "InlineFragment") {
      max = Math.max(max, depthOf(selection.selectionSet, fragments, seen))
    } else {
      const name = selection.name.value
      if (seen.has(name)) continue
      const fragment = fragments(name)
      if (fragment) max = Math.max(max, depthOf(fragment.selectionSet, fragments, new Set([...seen, name])))
    }
  }
  return max
}

/** A validation rule rejecting operations whose field nesting exceeds `max`. */
export const depthLimit =
  (max: number) =>
  (context: ValidationContext): ASTVisitor => ({
    OperationDefinition(node: OperationDefinitionNode) {
      const depth = depthOf(node.selectionSet, (name) => context.getFragment(name), new Set())
      if (depth > max)
        context.reportError(
          new GraphQLError(`The query is ${depth} levels deep; the limit is ${max}`, {
            nodes: [node],
            extensions: { code: "DEPTH_LIMIT_EXCEEDED" },
          }),
        )
    },
  })

const depthLimitPlugin = (max: number): Plugin => ({
  onValidate: ({ addValidationRule }) => {
    addValidationRule(depthLimit(max))
  },
})

const complexityLimitPlugin = (max: number): Plugin => ({
  onValidate: ({ addValidationRule }) => {
    addValidationRule(complexityLimit(max))
  },
})

/**
 * What the server gives the handler beside the request: the node:http request (standalone server), or
 * the client's address (the all-in-one route, which hands over a Fetch API request).
 */
export interface GatewayServerContext {
  readonly req?: { readonly socket?: { readonly remoteAddress?: string | undefined } }
  readonly clientAddress?: string | undefined
}

/** The GraphQL endpoint (graphql-yoga, no GraphiQL page) over a runtime of the services. */
export const makeGraphqlHandler = (options: {
  readonly runtime: GatewayRuntime
  readonly graphqlEndpoint?: string
  /** Body size and nesting limits (default: MAX_JSON_BYTES and MAX_JSON_DEPTH's defaults). */
  readonly limits?: GraphqlInputLimits | undefined
  readonly logging?: GatewayLogging
}) =>
  createYoga<GatewayServerContext, GraphqlContext>({
    schema,
    graphqlEndpoint: options.graphqlEndpoint ?? "/graphql",
    graphiql: false,
    landingPage: false,
    logging: gatewayLogger(options.logging),
    // Only JSON POST and GET: no multipart (GraphQL file uploads) and no batching.
    multipart: false,
    plugins: [
      inputLimitsPlugin(options.limits ?? defaultGraphqlInputLimits),
      depthLimitPlugin(MAX_DEPTH),
      complexityLimitPlugin(MAX_COST),
    ],
    maskedErrors: {
      maskError: (error, message, isDev) => {
        const original = error instanceof GraphQLError ? (error.originalError ?? error) : error
        const mapped = toGraphQLError(original)
        if (mapped && mapped !== error) {
          return new GraphQLError(mapped.message, {
            ...(error instanceof GraphQLError ? { nodes: error.nodes, path: error.path } : {}),
            extensions: mapped.extensions,
          })
        }
        return defaultMaskError(error, message, isDev)
      },
    },
    context: ({ request, req, clientAddress }) =>
      makeContext(options.runtime, {
        apiKey: request.headers.get("x-api-key") ?? undefined,
        sessionToken: Cookies.parseHeader(request.headers.get("cookie") ?? "")[SESSION_COOKIE],
        csrfToken: request.headers.get(CSRF_HEADER) ?? undefined,
        method: request.method,
        clientAddress: clientAddress ?? req?.socket?.remoteAddress,
      }),
  })

export interface GraphqlServer {
  readonly url: string
  readonly port: number
  readonly close: () => Promise<void>
}

/**
 * Where the gateway's services get their database, files and public addresses, and their settings
 * (`ServicesOptions`: `webhooks` unset is a key of this process only, fit for tests alone; the rate limit
 * and the throttles are shared with the REST API through the database), and the gateway's own limits.
 */
export interface GatewayOptions extends ServicesOptions {
  /** Body size and nesting limits of requests (unset: the defaults). */
  readonly limits?: GraphqlInputLimits
  /** Timeouts and connections per client of the standalone server (unset: the defaults). */
  readonly http?: HttpServerSettings
  /**
   * Where errors and the like are logged (unset: graphql-yoga's console logger at info level). Errors a
   * client causes are logged at debug level without a stack.
   */
  readonly logging?: GatewayLogging
}

/** A runtime of the services the resolvers call. */
export const makeGatewayRuntime = (options: GatewayOptions): GatewayRuntime =>
  ManagedRuntime.make(servicesLayer(options))

/**
 * A web handler as a route, as `HttpApp.fromWebHandler`, except that the web request's signal also aborts
 * when the client goes while the response is still streaming (a subscription), not only while the handler
 * is working out the response: the standalone server's requests behave the same.
 */
export const fromWebHandler = (handler: (request: Request) => Promise<Response>) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const controller = new AbortController()
    const abort = Effect.sync(() => controller.abort())
    const web = yield* HttpServerRequest.toWeb(request, { signal: controller.signal })
    const response = yield* Effect.tryPromise({
      try: () => handler(web),
      catch: (cause) =>
        new HttpServerError.RequestError({
          request,
          reason: "Transport",
          cause,
          description: "GraphQL handler",
        }),
    }).pipe(Effect.onInterrupt(() => abort))
    const answer = HttpServerResponse.fromWeb(response)
    const body = answer.body
    if (body._tag !== "Stream") return answer
    return HttpServerResponse.setBody(
      answer,
      HttpBody.stream(
        Stream.ensuringWith(body.stream, (exit) => (Exit.isSuccess(exit) ? Effect.void : abort)),
        body.contentType,
        body.contentLength,
      ),
    )
  })

/** Ends the gateway's live subscriptions (their clients get `complete`); the runtime stays usable. */
const endSubscriptions = (runtime: GatewayRuntime): Promise<void> =>
  runtime.runPromise(Effect.flatMap(ProgressFeed, (feed) => feed.close)).catch(() => undefined)

/**
 * The `/graphql` handler of an Effect HTTP API's router, with the gateway's runtime; the runtime lives as
 * long as the scope (live subscriptions end first when it closes).
 */
export const graphqlHandler = (options: GatewayOptions) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const r = makeGatewayRuntime(options)
        await r.runtime()
        return r
      }),
      // Live subscriptions end first, so that their responses complete before the server closes.
      (r) => Effect.promise(() => endSubscriptions(r).then(() => r.dispose())),
    )
    const yoga = makeGraphqlHandler({
      runtime,
      limits: options.limits,
      ...(options.logging === undefined ? {} : { logging: options.logging }),
    })
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      // The TCP peer of the connection: the Fetch API request made from it no longer carries it.
      const clientAddress = Option.getOrUndefined(request.remoteAddress)
      return fromWebHandler((web) => Promise.resolve(yoga.fetch(web, { clientAddress })))
    })
  })

/**
 * `/graphql` as a route of an Effect HTTP API's router (the all-in-one process serves it beside the REST
 * API on one port). The gateway's runtime lives as long as the router.
 */
export const graphqlRoute = (options: GatewayOptions) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.flatMap(graphqlHandler(options), (handler) => router.all("/graphql", handler)),
  )

/** A standalone GraphQL server (node:http) over the database at `dbUrl`, serving `/graphql`. */
export const startGraphqlServer = async (
  options: GatewayOptions & {
    readonly port: number
    readonly host?: string
    /** On close, how long requests in flight may finish before their connections are closed (10 s). */
    readonly shutdownGraceMs?: number
  },
): Promise<GraphqlServer> => {
  const runtime = makeGatewayRuntime(options)
  await runtime.runtime()
  const yoga = makeGraphqlHandler({
    runtime,
    limits: options.limits,
    ...(options.logging === undefined ? {} : { logging: options.logging }),
  })
  const http = options.http ?? defaultHttpServerSettings
  const server: Server = drainOnClose(
    limitServer(createServer(serverOptions(http), yoga), http),
    options.shutdownGraceMs ?? 10_000,
  )
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port, options.host ?? "0.0.0.0", () => resolve())
  })
  const { port } = server.address() as AddressInfo
  const host = options.host ?? "127.0.0.1"
  return {
    url: `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}/graphql`,
    port,
    close: async () => {
      // No new connections; live subscriptions end (their clients get `complete`), requests in flight
      // finish, and connections are closed as they fall idle (all of them after the grace period).
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      await endSubscriptions(runtime)
      await closed
      await runtime.dispose()
    },
  }
}
