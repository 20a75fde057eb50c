import type { Agent, Dimension, Document, DocumentPage, ProjectStatus } from "@dxs/domain/Records"
import {
  Agents,
  type AgentsStatus,
  authenticateRequest,
  type BadRequest,
  type BoundingBoxesResponse,
  type Conflict,
  CurrentOrganization,
  Dimensions,
  Documents,
  type DownloadForbidden,
  type Forbidden,
  Launches,
  NotFound,
  Pages,
  type PayloadTooLarge,
  Projects,
  Results,
  requestSubject,
  type Services,
  type ServicesContext,
  type ServiceUnavailable,
  type TooManyRequests,
  type TooManySubscriptions,
  type Unauthorized,
  type Unprocessable,
  type UnsupportedMediaType,
  unavailableFor,
} from "@dxs/services"
import DataLoader from "dataloader"
import { Cause, Effect, Exit, type ManagedRuntime, Option, Predicate, Stream } from "effect"
import { GraphQLError } from "graphql"
import { createGraphQLError } from "graphql-yoga"

/** What the resolvers may call: the services (each call needs only the request's organisation besides). */
export type GatewayServices = Services

/** The services and the storage under them, which the authentication of a request reads. */
export type GatewayRuntime = ManagedRuntime.ManagedRuntime<ServicesContext, unknown>

/** The failures a use-case ends with that a client is told about (the rest are defects, masked). */
type Problem =
  | BadRequest
  | Unauthorized
  | Forbidden
  | DownloadForbidden
  | TooManyRequests
  | TooManySubscriptions
  | NotFound
  | Conflict
  | PayloadTooLarge
  | UnsupportedMediaType
  | Unprocessable
  | ServiceUnavailable

/** The GraphQL `extensions.code` of each failure, by its tag (a new failure type must be given one). */
const codes: { readonly [Tag in Problem["_tag"]]: string } = {
  BadRequest: "BAD_USER_INPUT",
  Unauthorized: "UNAUTHENTICATED",
  Forbidden: "FORBIDDEN",
  DownloadForbidden: "FORBIDDEN",
  TooManyRequests: "RATE_LIMITED",
  TooManySubscriptions: "RATE_LIMITED",
  NotFound: "NOT_FOUND",
  Conflict: "CONFLICT",
  PayloadTooLarge: "BAD_REQUEST",
  UnsupportedMediaType: "BAD_REQUEST",
  Unprocessable: "BAD_USER_INPUT",
  ServiceUnavailable: "SERVICE_UNAVAILABLE",
}

const isProblem = (e: unknown): e is Problem =>
  Predicate.hasProperty(e, "_tag") && typeof e._tag === "string" && Object.hasOwn(codes, e._tag)

/** A failure a client is told about as a GraphQL error with `extensions.code`; anything else stays masked. */
export const toGraphQLError = (e: unknown): GraphQLError | undefined => {
  if (e instanceof GraphQLError) return e
  if (!isProblem(e)) return undefined
  const errors = "errors" in e ? e.errors : undefined
  const diagnostics = "diagnostics" in e ? e.diagnostics : undefined
  const retryAfter = "retry_after" in e ? e.retry_after : undefined
  return createGraphQLError(e.detail, {
    extensions: {
      code: codes[e._tag],
      status: e.status,
      ...(errors === undefined ? {} : { errors }),
      ...(diagnostics === undefined ? {} : { diagnostics }),
      ...(retryAfter === undefined ? {} : { retry_after: retryAfter }),
    },
  })
}

/** What a failed use-case throws: typed failures as coded GraphQL errors; defects stay masked. */
const errorOf = (cause: Cause.Cause<unknown>): unknown => {
  // Storage or the database out of reach: SERVICE_UNAVAILABLE with `retry_after`, as REST's 503.
  const outage = unavailableFor(cause)
  if (outage !== undefined) return toGraphQLError(outage.problem)
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) return toGraphQLError(failure.value) ?? new Error("Unexpected failure")
  return badInput(Cause.squash(cause)) ?? Cause.squash(cause)
}

/** Runs a use-case for the organisation; typed failures become coded GraphQL errors, defects stay masked. */
const runner =
  (runtime: GatewayRuntime, org: CurrentOrganization["Type"]) =>
  async <A, E>(effect: Effect.Effect<A, E, GatewayServices | CurrentOrganization>): Promise<A> => {
    const exit = await runtime.runPromiseExit(Effect.provideService(effect, CurrentOrganization, org))
    if (Exit.isSuccess(exit)) return exit.value
    throw errorOf(exit.cause)
  }

type Item<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: Error }

const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)))

/**
 * Serves a use-case's stream as a subscription's event stream, each element `wrap`ped. The first
 * element is awaited here, so a subscription that cannot start (NOT_FOUND, RATE_LIMITED…) fails as a
 * whole; a later failure is pushed as a last event (`wrap` of its coded error). The stream runs until it
 * ends or the client goes (`return()`, or `signal` before the first element), which interrupts it at
 * once, so its finalizers give back what it held; a stream interrupted by the server's shutdown just ends.
 */
const streamer =
  (runtime: GatewayRuntime, org: CurrentOrganization["Type"]) =>
  async <A, E, B>(
    stream: Stream.Stream<A, E, GatewayServices | CurrentOrganization>,
    wrap: (value: A | Error) => B,
    signal?: AbortSignal,
  ): Promise<AsyncIterableIterator<B>> => {
    const items: Stream.Stream<Item<A>, never, GatewayServices> = stream.pipe(
      Stream.provideService(CurrentOrganization, org),
      Stream.map((value): Item<A> => ({ ok: true, value })),
      Stream.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Stream.empty
          : Stream.succeed<Item<A>>({ ok: false, error: asError(errorOf(cause)) }),
      ),
    )
    const source = Stream.toAsyncIterableRuntime(items, await runtime.runtime())[Symbol.asyncIterator]()
    const stop = () => {
      void source.return?.()
    }
    // The client may go before the first element: the stream stops then, and so does this wait.
    const first = await new Promise<IteratorResult<Item<A>> | "aborted">((resolve, reject) => {
      const onAbort = () => {
        stop()
        resolve("aborted")
      }
      if (signal?.aborted) return onAbort()
      signal?.addEventListener("abort", onAbort, { once: true })
      source.next().then(
        (r) => {
          signal?.removeEventListener("abort", onAbort)
          resolve(r)
        },
        (e) => {
          signal?.removeEventListener("abort", onAbort)
          reject(e)
        },
      )
    })
    if (first === "aborted") throw signal?.reason ?? new Error("The client went away")
    let pending: IteratorResult<Item<A>> | undefined = first
    if (!first.done && !first.value.ok) throw first.value.error
    let finished = false
    const done = { done: true, value: undefined } as const
    const iterator: AsyncIterableIterator<B> = {
      [Symbol.asyncIterator]: () => iterator,
      next: async () => {
        if (finished) return done
        const r = pending ?? (await source.next())
        pending = undefined
        if (r.done) {
          finished = true
          return done
        }
        if (r.value.ok) return { done: false, value: wrap(r.value.value) }
        finished = true
        stop()
        return { done: false, value: wrap(r.value.error) }
      },
      return: async () => {
        finished = true
        await source.return?.()
        return done
      },
    }
    return iterator
  }

/**
 * PostgreSQL refusing a value's text form (an id that is not a UUID, a date that is not a date): the
 * argument was wrong, so BAD_USER_INPUT rather than a masked error. The REST API refuses these with 400
 * while decoding the request.
 */
const badInput = (e: unknown): GraphQLError | undefined => {
  const code = (e as { code?: unknown } | null)?.code
  if (code !== "22P02" && code !== "22007" && code !== "22008") return undefined
  const message = e instanceof Error ? e.message : String(e)
  return createGraphQLError(
    `Invalid argument: ${message.replace(/^invalid input syntax for type uuid/, "not a UUID")}`,
    {
      extensions: { code: "BAD_USER_INPUT", status: 400 },
    },
  )
}

export type Run = ReturnType<typeof runner>

/**
 * A loader's batch function over a batch read of the services: one call for all the keys of a batch.
 * A key absent from the result is that key's NOT_FOUND (a project of another organisation, or none);
 * a failure of the call is every key's error.
 */
const batchRead =
  <A, E>(
    run: Run,
    read: (
      keys: ReadonlyArray<string>,
    ) => Effect.Effect<ReadonlyMap<string, A>, E, GatewayServices | CurrentOrganization>,
    absent: (key: string) => A | Error,
  ) =>
  async (keys: ReadonlyArray<string>): Promise<Array<A | Error>> => {
    const found = await run(read(keys))
    return keys.map((key) => (found.has(key) ? found.get(key)! : absent(key)))
  }

const projectNotFound = (projectId: string): Error =>
  toGraphQLError(NotFound.of("Project", projectId)) ?? new Error("Unexpected failure")

/**
 * Per-request loaders. Each loader reads all the projects (or documents) a request touches with one
 * service call, so `projects { documents agents dimensions }` sends as many SQL statements for many
 * projects as for one; each project's lists are loaded once however many times a query names them (the
 * agents' `progress` reads the status records of all projects at once).
 */
export const makeLoaders = (run: Run) => ({
  documents: new DataLoader<string, ReadonlyArray<Document>>(
    batchRead(run, (ids) => Effect.flatMap(Documents, (d) => d.listForProjects(ids)), projectNotFound),
  ),
  agents: new DataLoader<string, ReadonlyArray<Agent>>(
    batchRead(run, (ids) => Effect.flatMap(Agents, (a) => a.listForProjects(ids)), projectNotFound),
  ),
  dimensions: new DataLoader<string, ReadonlyArray<Dimension>>(
    batchRead(run, (ids) => Effect.flatMap(Dimensions, (d) => d.listForProjects(ids)), projectNotFound),
  ),
  status: new DataLoader<string, ProjectStatus>(
    batchRead(run, (ids) => Effect.flatMap(Projects, (p) => p.statusForProjects(ids)), projectNotFound),
  ),
  agentsStatus: new DataLoader<string, AgentsStatus>(
    batchRead(run, (ids) => Effect.flatMap(Launches, (l) => l.statusForProjects(ids)), projectNotFound),
  ),
  /** Bounding boxes of extractions of the organisation (one read for all the extractions a request names). */
  boundingBoxes: new DataLoader<string, BoundingBoxesResponse>(
    batchRead(
      run,
      (ids) => Effect.flatMap(Results, (r) => r.boundingBoxesFor(ids)),
      (id) => toGraphQLError(NotFound.of("Extraction", id)) ?? new Error("Unexpected failure"),
    ),
  ),
  /** Pages of documents of the organisation; a document without pages (or not the organisation's) has none. */
  pages: new DataLoader<string, ReadonlyArray<DocumentPage>>(
    batchRead(
      run,
      (ids) => Effect.flatMap(Pages, (p) => p.forDocuments(ids)),
      () => [],
    ),
  ),
})

export interface GraphqlContext {
  readonly run: Run
  /** Serves a use-case's stream as a subscription (see `streamer`). */
  readonly live: ReturnType<typeof streamer>
  /** Whose live-subscription places the request uses: its API key's, or its member's. */
  readonly subject: string
  readonly loaders: ReturnType<typeof makeLoaders>
}

/** What a request says of who it acts for: its API key, or its session cookie and CSRF token. */
export interface RequestCredentials {
  readonly apiKey: string | undefined
  readonly sessionToken: string | undefined
  readonly csrfToken: string | undefined
  /** The HTTP method: a session must come with its CSRF token unless it is GET (HEAD, OPTIONS). */
  readonly method: string
  /**
   * The client's address: the TCP peer of the connection the gateway received (no proxy header is
   * trusted); refused credentials are counted by it.
   */
  readonly clientAddress?: string | undefined
}

/**
 * The request's context: its organisation (from `X-API-Key`, or the web application's session with its
 * CSRF token, by the REST API's rules and limits), a runner and fresh loaders.
 */
export const makeContext = async (
  runtime: GatewayRuntime,
  credentials: RequestCredentials,
): Promise<GraphqlContext> => {
  const exit = await runtime.runPromiseExit(
    authenticateRequest({ ...credentials, clientAddress: credentials.clientAddress }),
  )
  if (Exit.isFailure(exit)) {
    const failure = Cause.failureOption(exit.cause)
    if (Option.isSome(failure)) {
      const error = toGraphQLError(failure.value)
      if (error) throw error
    }
    throw Cause.squash(exit.cause)
  }
  const run = runner(runtime, exit.value)
  return {
    run,
    live: streamer(runtime, exit.value),
    subject: requestSubject(credentials, exit.value),
    loaders: makeLoaders(run),
  }
}
