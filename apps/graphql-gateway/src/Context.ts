import type { Db } from "@dxs/db"
import { query } from "@dxs/db"
import type { Agent, Dimension, Document, DocumentPage, LayoutItem } from "@dxs/domain/Records"
import {
  Agents,
  type AgentsStatus,
  ApiKeys,
  CurrentOrganization,
  Dimensions,
  Documents,
  Launches,
  type Projects,
  type Results,
} from "@dxs/services"
import DataLoader from "dataloader"
import { Cause, Effect, Exit, type ManagedRuntime, Option } from "effect"
import { GraphQLError } from "graphql"
import { createGraphQLError } from "graphql-yoga"

/** What the resolvers may call. */
export type GatewayServices = Db | ApiKeys | Projects | Documents | Agents | Dimensions | Launches | Results

export type GatewayRuntime = ManagedRuntime.ManagedRuntime<GatewayServices, unknown>

/** The GraphQL `extensions.code` of each problem status. */
const codes: Record<number, string> = {
  400: "BAD_USER_INPUT",
  401: "UNAUTHENTICATED",
  404: "NOT_FOUND",
  409: "CONFLICT",
}

const isProblem = (e: unknown): e is { readonly status: number; readonly detail: string } =>
  typeof e === "object" &&
  e !== null &&
  typeof (e as { status?: unknown }).status === "number" &&
  typeof (e as { detail?: unknown }).detail === "string"

/** A problem error (400/401/404/409…) as a GraphQL error with `extensions.code`; anything else stays masked. */
export const toGraphQLError = (e: unknown): GraphQLError | undefined => {
  if (e instanceof GraphQLError) return e
  if (!isProblem(e)) return undefined
  const errors = (e as { errors?: unknown }).errors
  return createGraphQLError(e.detail, {
    extensions: {
      code: codes[e.status] ?? (e.status >= 500 ? "INTERNAL_SERVER_ERROR" : "BAD_REQUEST"),
      status: e.status,
      ...(errors === undefined ? {} : { errors }),
    },
  })
}

/** Runs a use-case for the organisation; typed failures become coded GraphQL errors, defects stay masked. */
const runner =
  (runtime: GatewayRuntime, org: CurrentOrganization["Type"]) =>
  async <A, E>(effect: Effect.Effect<A, E, GatewayServices | CurrentOrganization>): Promise<A> => {
    const exit = await runtime.runPromiseExit(Effect.provideService(effect, CurrentOrganization, org))
    if (Exit.isSuccess(exit)) return exit.value
    const failure = Cause.failureOption(exit.cause)
    if (Option.isSome(failure)) throw toGraphQLError(failure.value) ?? new Error("Unexpected failure")
    throw Cause.squash(exit.cause)
  }

export type Run = ReturnType<typeof runner>

/**
 * One batch of keys: each key's use-case runs concurrently inside one runtime call, and a key's failure
 * is that key's error (the others still load).
 */
const batch =
  <A, E>(run: Run, f: (key: string) => Effect.Effect<A, E, GatewayServices | CurrentOrganization>) =>
  (keys: ReadonlyArray<string>): Promise<Array<A | Error>> =>
    run(
      Effect.forEach(keys, (key) => Effect.either(f(key)), { concurrency: 8 }).pipe(
        Effect.map((results) =>
          results.map((r) =>
            r._tag === "Right" ? r.right : (toGraphQLError(r.left) ?? new Error("Unexpected failure")),
          ),
        ),
      ),
    )

/**
 * Per-request loaders. Each project's lists are loaded once per request however many times a query
 * names them (e.g. `projects { documents agents }` loads each project's documents once, and the agents'
 * `progress` reads one status record per project); pages of every document a request touches are read
 * in a single query.
 */
export const makeLoaders = (run: Run) => ({
  documents: new DataLoader<string, ReadonlyArray<Document>>(
    batch(run, (projectId) => Effect.flatMap(Documents, (d) => d.list(projectId, {}))),
  ),
  agents: new DataLoader<string, ReadonlyArray<Agent>>(
    batch(run, (projectId) => Effect.flatMap(Agents, (a) => a.list(projectId))),
  ),
  dimensions: new DataLoader<string, ReadonlyArray<Dimension>>(
    batch(run, (projectId) => Effect.flatMap(Dimensions, (d) => d.list(projectId))),
  ),
  agentsStatus: new DataLoader<string, AgentsStatus>(
    batch(run, (projectId) => Effect.flatMap(Launches, (l) => l.status(projectId))),
  ),
  /** Keys are ids of documents already read through the Documents service (so already tenant-scoped). */
  pages: new DataLoader<string, ReadonlyArray<DocumentPage>>(async (documentIds) => {
    const rows = await run(
      query((db) =>
        db
          .selectFrom("pages")
          .select(["document_id", "number", "text", "layout", "width", "height", "unit"])
          .where("document_id", "in", [...documentIds])
          .orderBy("document_id")
          .orderBy("number")
          .execute(),
      ),
    )
    const byDocument = new Map<string, Array<DocumentPage>>()
    for (const r of rows) {
      const list = byDocument.get(r.document_id) ?? []
      list.push({
        document_id: r.document_id,
        page_number: r.number,
        text: r.text,
        width: r.width,
        height: r.height,
        unit: r.unit,
        layout: r.layout as ReadonlyArray<LayoutItem>,
      })
      byDocument.set(r.document_id, list)
    }
    return documentIds.map((id) => byDocument.get(id) ?? [])
  }),
})

export interface GraphqlContext {
  readonly run: Run
  readonly loaders: ReturnType<typeof makeLoaders>
}

/** The request's context: its organisation (from `X-API-Key`), a runner and fresh loaders. */
export const makeContext = async (
  runtime: GatewayRuntime,
  apiKey: string | null,
): Promise<GraphqlContext> => {
  const exit = await runtime.runPromiseExit(
    Effect.flatMap(ApiKeys, (keys) => keys.authenticate(apiKey ?? undefined)),
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
  return { run, loaders: makeLoaders(run) }
}
