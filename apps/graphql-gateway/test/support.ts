/**
 * What the gateway's test files share: the REST test API with a gateway over its database (both on
 * loopback), GraphQL over HTTP, the fields of REST's records as GraphQL selections, uploads, and results
 * seeded as the pipeline would write them.
 */
import { type Database, Db, makeKysely } from "@dxs/db"
import type { WebhookSettings } from "@dxs/pipeline/webhooks/Settings"
import { startTestApi, type TestApi, type TestApiOptions } from "@dxs/rest-api/TestApi"
import { onePagePdf } from "@dxs/testing/Documents"
import { type Client, createProject } from "@dxs/testing/RestClient"
import { type AgentVersion, agentVersion, projectRows } from "@dxs/testing/Seeding"
import { type Clock, Effect, Layer } from "effect"
import type { Kysely } from "kysely"
import { expect } from "vitest"
import { type GatewayOptions, type GraphqlServer, startGraphqlServer } from "../src/index.ts"

/** A GraphQL answer. */
export type Reply = { data?: any; errors?: Array<{ message: string; extensions?: any }> }

/** A gateway on loopback over the database and files of its own REST test API. */
export interface Gateway extends GraphqlServer {
  readonly api: TestApi
  /** SQL statements the gateway has sent so far (BEGIN/COMMIT aside); 0 unless started with `countStatements`. */
  readonly statements: () => number
}

export interface GatewayTestOptions {
  /** Also run a worker beside the REST API (documents get parsed, runs run); see `TestApiOptions`. */
  readonly worker?: TestApiOptions["worker"]
  /**
   * The deployment's key of webhook secrets at rest, given to both processes as the CLI does (the gateway
   * refusing loopback targets). Unset: each process has a key of its own.
   */
  readonly webhookKey?: WebhookSettings["encryptionKey"]
  /** Count the SQL statements the gateway sends (`Gateway.statements`). */
  readonly countStatements?: boolean
  /** Refused credentials per minute per client address, in both processes (default: 100,000). */
  readonly authFailuresPerMinute?: number
  /** Where the gateway logs (default: graphql-yoga's console logger). */
  readonly logging?: GatewayOptions["logging"]
  /** Live subscriptions per API key or member (default: the gateway's, 10). */
  readonly maxSubscriptionsPerKey?: number
  /** The clock of both processes (rate windows, link expiry; default: the system's). */
  readonly clock?: Clock.Clock
}

/** The gateway's database handle: a pool on `dbUrl` that calls `counted` for every statement it sends. */
const countingDb = (dbUrl: string, counted: () => void) =>
  Layer.scoped(
    Db,
    Effect.acquireRelease(
      Effect.sync(() => ({
        kysely: makeKysely(dbUrl, 5).withPlugin({
          transformQuery: (args) => {
            counted()
            return args.node
          },
          transformResult: async (args) => args.result,
        }),
        url: dbUrl,
      })),
      ({ kysely }) => Effect.promise(() => kysely.destroy()),
    ),
  )

/** Starts the REST test API (cleaned up after the file) and a gateway over it; close the gateway after all. */
export const startGateway = async (options: GatewayTestOptions = {}): Promise<Gateway> => {
  const { worker, webhookKey } = options
  const authFailuresPerMinute = options.authFailuresPerMinute ?? 100_000
  const api = await startTestApi({
    ...(worker === undefined ? {} : { worker }),
    ...(webhookKey === undefined ? {} : { webhooks: { encryptionKey: webhookKey } }),
    authFailuresPerMinute,
    clock: options.clock,
  })
  let statements = 0
  const server = await startGraphqlServer({
    port: 0,
    host: "127.0.0.1",
    dbUrl: api.dbUrl,
    blobDir: api.blobDir,
    publicUrl: api.origin,
    appUrl: api.origin,
    // As the REST test API: suites are not throttled.
    rateLimitPerMinute: 100_000,
    authThrottle: { signInAttemptsPerMinute: 100_000, authFailuresPerMinute },
    clock: options.clock,
    ...(webhookKey === undefined ? {} : { webhooks: { encryptionKey: webhookKey, allowLoopback: false } }),
    ...(options.logging === undefined ? {} : { logging: options.logging }),
    ...(options.maxSubscriptionsPerKey === undefined
      ? {}
      : { maxSubscriptionsPerKey: options.maxSubscriptionsPerKey }),
    ...(options.countStatements
      ? {
          db: countingDb(api.dbUrl, () => {
            statements++
          }),
          // Every request reads its key: the counts of two requests are compared.
          credentialMemoryMs: 0,
        }
      : {}),
  })
  return { ...server, api, statements: () => statements }
}

/** Posts a GraphQL operation to the server with the API key (none: anonymous). */
export const call = async (
  server: GraphqlServer,
  key: string | undefined,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<Reply> => {
  const res = await fetch(server.url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key === undefined ? {} : { "x-api-key": key }) },
    body: JSON.stringify({ query, variables }),
  })
  return (await res.json()) as Reply
}

/** `call` on the server `current` returns when called (one a test file starts in its `beforeAll`). */
export const graphqlOn =
  (current: () => GraphqlServer) =>
  (key: string | undefined, query: string, variables: Record<string, unknown> = {}) =>
    call(current(), key, query, variables)

/** The data of a reply without errors. */
export const ok = (r: Reply) => {
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined()
  return r.data
}

export const codesOf = (r: Reply) => (r.errors ?? []).map((e) => e.extensions?.code)

/** An operation that must succeed: its data, and how many SQL statements the gateway sent for it. */
export const countStatements = async (
  gateway: Gateway,
  key: string,
  query: string,
  variables: Record<string, unknown> = {},
) => {
  const before = gateway.statements()
  const r = await call(gateway, key, query, variables)
  expect(r.errors).toBeUndefined()
  return { count: gateway.statements() - before, data: r.data }
}

// The fields of REST's records, as GraphQL selections.
export const PROJECT_FIELDS = `id name description created_at last_visited_at reference_date auto_archive_after_days
  document_count agent_count is_pinned folder_id project_modules target_output_schema output_mapping_status`
export const DOCUMENT_FIELDS = `id project_id file_url uploaded_at type page_count version summary metadata status
  uses_agentic_extraction last_parsed_at archive_requested_at tags { key value } file_name failure_reason
  parent_document_id`
export const DIMENSION_FIELDS = `id project_id name description example_values value_type source auto_attach_to_new_agents
  created_at`
/** An agent as REST GET …/agents/{id}/ has it. */
export const AGENT_FIELDS = `id project_id template_id created_at extraction_status requires_attention improvement_tip_summary
  name extraction_instructions value_type unit examples inconsistency_instructions resolution_instructions
  enable_complex_calculations_in_resolution enable_web_search value_if_not_found inconsistency_summary agent_type
  derived_prompt is_evaluation derived_agent_references { agent_id agent_name }
  dimensions { dimension_id dimension_mapping_id name description values value_count order are_values_dynamic source }`
const STAGE = "total completed percentage"
/** An agent's progress, as REST GET …/agents/status/ reports it. */
export const PROGRESS = `progress { parsing { ${STAGE} } extraction { ${STAGE} } web_search { ${STAGE} }
  resolution { ${STAGE} } is_running is_pending }`
export const RESULT_DETAIL = `id atomic_value_id result_name agent_id agent_name value_type unit extraction_status
  requires_attention value resolution_status justification_for_resolution_status references source_type
  is_web_supplement web_supplement is_overridden updated_by_email created_at updated_at
  dimension_instances { id dimension_id dimension_value name document_id }
  sources { document_name page_number document_id atomic_value_ids }
  latest_review_status latest_review_comment latest_review_at latest_review_by confidence`
export const EXTRACTION = `id value relevant_passage reasoning consistent justification_for_consistency source_type
  document_id document_name page_number extracted_at web_search_query web_search_timestamp web_citations
  derived_sources grounded confidence`

/** A signed file link differs only in its expiry second between two reads. */
export const withoutSignature = (d: { file_url: string }) => ({
  ...d,
  file_url: d.file_url.replace(/\?.*$/, ""),
})

/** Uploads a file through REST (multipart field `file`, and `tags` when given); returns the document's id. */
export const upload = async (
  client: Client,
  projectId: string,
  name: string,
  bytes: Uint8Array,
  tags?: Record<string, string>,
) => {
  const form = new FormData()
  form.set("file", new Blob([bytes as Uint8Array<ArrayBuffer>]), name)
  if (tags !== undefined) form.set("tags", JSON.stringify(tags))
  const r = await client.send("POST", `/projects/${projectId}/documents/`, form)
  expect(r.status, JSON.stringify(r.body)).toBe(201)
  return r.body.id as string
}

/** Uploads `name`.pdf, a one-page PDF whose line is `name`; returns the document's id. */
export const uploadPdf = (client: Client, projectId: string, name: string, tags?: Record<string, string>) =>
  upload(client, projectId, `${name}.pdf`, onePagePdf(name), tags)

/** Runs `f` with a pool of two connections to the API's database, closed afterwards. */
export const withDb = async <A>(api: TestApi, f: (db: Kysely<Database>) => Promise<A>): Promise<A> => {
  const db = makeKysely(api.dbUrl, 2)
  try {
    return await f(db)
  } finally {
    await db.destroy()
  }
}

/**
 * A result of a number agent for one value of the project's Region dimension, as the pipeline writes it:
 * `amount` with `status`, resolved from an extraction on page 1 of the invoice.pdf `extraction.document`
 * when `extraction` is given, with no references otherwise. Returns the result's id.
 */
export const seedRegionResult = async (
  db: Kysely<Database>,
  o: {
    readonly project: string
    readonly agent: AgentVersion
    readonly region: string
    readonly value: string
    readonly amount: number | null
    readonly status: string
    readonly confidence?: number | null
    readonly extraction?: { readonly document: string; readonly value: string; readonly passage: string }
  },
) => {
  const rows = projectRows(db, o.project)
  const instance = await rows.instance(o.region, "Region", o.value)
  const av = await rows.atomicValue(o.agent.id, [instance])
  const extraction =
    o.extraction === undefined
      ? undefined
      : await rows.extraction(o.agent, av, {
          document_id: o.extraction.document,
          value: o.extraction.value,
          page_number: 1,
          relevant_passage: o.extraction.passage,
          reasoning: "labelled total",
          consistent: true,
          justification_for_consistency: "agrees",
        })
  return rows.result(o.agent, av, {
    result_name: o.value,
    value: o.amount,
    resolution_status: o.status,
    references: JSON.stringify(extraction === undefined ? {} : { [extraction]: ["invoice.pdf", 1] }),
    confidence: o.confidence ?? null,
  })
}

/**
 * Through `client`'s REST API: a project with a Region dimension, a "Total amount" agent on its value EU
 * and an uploaded invoice; then the agent's Resolved result for EU (1234.5, cited from the invoice) seeded
 * as the pipeline writes it.
 */
export const seedAmountResult = async (api: TestApi, client: Client) => {
  const project = await createProject(client)
  const region = (await client.post(`/projects/${project}/dimensions/`, { name: "Region" })).body
  const agent = (
    await client.post(`/projects/${project}/agents/`, {
      name: "Total amount",
      value_type: "number",
      dimensions: [{ dimension_id: region.id, values: ["EU"] }],
    })
  ).body
  const document = await upload(client, project, "invoice.pdf", onePagePdf("Invoice total 1234.50 EUR"))
  const result = await withDb(api, async (db) =>
    seedRegionResult(db, {
      project,
      agent: await agentVersion(db, agent.id),
      region: region.id,
      value: "EU",
      amount: 1234.5,
      status: "Resolved",
      extraction: { document, value: "1,234.50", passage: "Invoice total 1234.50 EUR" },
    }),
  )
  return { project, result }
}
