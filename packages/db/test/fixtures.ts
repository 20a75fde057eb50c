/** Rows the repository tests start from. */
import { randomUUID } from "node:crypto"
import { newOrganizationProject } from "@dxs/testing/Seeding"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Effect } from "effect"
import { Kysely } from "kysely"
import pg from "pg"
import { afterAll } from "vitest"
import { makeDialect, makeKysely } from "../src/Db.ts"
import {
  type CurrentResultsFilter,
  EXTRACTION_STATUS_SLOT,
  ensureAtomicValues,
  type ResolvedRow,
  type ResultsWindow,
  resultsListPage,
  writeResults,
} from "../src/repositories/Results.ts"
import type { Database } from "../src/Schema.ts"

/** A new organisation with one project in it. */
export { newOrganizationProject }

/** The project's Document dimension (its documents' dimension), made. */
export const newDocumentDimension = async (db: Kysely<Database>, projectId: string) =>
  db
    .insertInto("dimensions")
    .values({ project_id: projectId, name: "Document", source: "DOCUMENT" })
    .returning("id")
    .executeTakeFirstOrThrow()

/** A custom dimension's fields: a string dimension of the project, with no description or examples. */
export const customDimension = (projectId: string, name: string) => ({
  project_id: projectId,
  name,
  description: "",
  example_values: "",
  value_type: "string",
  auto_attach_to_new_agents: false,
})

/** A result as the resolution stage writes it, with no justification, sources, verdicts or summary. */
export const resolvedRow = (
  row: Pick<ResolvedRow, "atomicValueId" | "resultName" | "value" | "status"> &
    Partial<Pick<ResolvedRow, "confidence">>,
): ResolvedRow => ({
  ...row,
  justification: "",
  references: {},
  sources: [],
  sourceType: "document",
  webSupplement: null,
  verdicts: [],
  summary: null,
})

/**
 * A project's documents (`invoice-<j>.pdf`, processed), its agents (`Field <k>`, of `valueType(k)`) and the
 * atomic value of each document and agent under the project's Document dimension: listed document by
 * document, agent by agent (`atomics[j * agents + k]`).
 */
export const documentsAndAgents = async (
  db: Kysely<Database>,
  projectId: string,
  counts: { readonly documents: number; readonly agents: number },
  valueType: (k: number) => string = () => "string",
) => {
  const dimension = await newDocumentDimension(db, projectId)
  const documents = await db
    .insertInto("documents")
    .values(
      Array.from({ length: counts.documents }, (_, j) => ({
        project_id: projectId,
        file_name: `invoice-${j}.pdf`,
        type: "PDF",
        status: "Processed",
        blob_key: randomUUID(),
        content_type: "application/pdf",
        size_bytes: 1,
        sha256: "0",
      })),
    )
    .returning(["id", "file_name"])
    .execute()
  const agentIds: Array<string> = []
  for (let k = 0; k < counts.agents; k++)
    agentIds.push(
      (
        await db
          .insertInto("agents")
          .values({ project_id: projectId, name: `Field ${k}`, value_type: valueType(k) })
          .returning("id")
          .executeTakeFirstOrThrow()
      ).id,
    )
  const atomics = await Effect.runPromise(
    ensureAtomicValues(
      db,
      projectId,
      documents.flatMap((d) =>
        agentIds.map((agentId) => ({
          agentId,
          instances: [{ dimensionId: dimension.id, name: "Document", value: d.file_name, documentId: d.id }],
        })),
      ),
    ),
  )
  return { documents, agentIds, atomics }
}

/**
 * Every agent's results over a project's documents (as `documentsAndAgents` made them), written as the
 * resolution stage writes them: the document `j`'s result of agent `k`, named after the document.
 */
export const writeAgentsResults = async (
  db: Kysely<Database>,
  projectId: string,
  seeded: Awaited<ReturnType<typeof documentsAndAgents>>,
  row: (
    j: number,
    k: number,
  ) => Pick<ResolvedRow, "value" | "status"> & Partial<Pick<ResolvedRow, "confidence">>,
) => {
  const { documents, agentIds, atomics } = seeded
  for (const [k, agentId] of agentIds.entries())
    await Effect.runPromise(
      writeResults(db, {
        projectId,
        agentId,
        configVersion: 1,
        rows: documents.map((d, j) =>
          resolvedRow({
            atomicValueId: atomics[j * agentIds.length + k]!.id,
            resultName: d.file_name,
            ...row(j, k),
          }),
        ),
      }),
    )
}

/**
 * A page of the results list as the API reads it (the list's context, then its page as JSON), parsed: the
 * count of results that pass the filter and the page's rows (`V1ResultRow`s, extraction status `Pending`).
 */
export const listResults = async (
  db: Kysely<Database>,
  projectId: string,
  filter: CurrentResultsFilter,
  window: ResultsWindow,
) => {
  const { organization_id } = await db
    .selectFrom("projects")
    .select("organization_id")
    .where("id", "=", projectId)
    .executeTakeFirstOrThrow()
  const page = await Effect.runPromise(resultsListPage(db, organization_id, projectId, filter, window))
  const { opening, agentIdLength } = EXTRACTION_STATUS_SLOT
  const slot = new RegExp(`${opening.replace(/\\/g, "\\\\")}[0-9a-f-]{${agentIdLength}}"`, "g")
  const json = page.json.replace(slot, '"extraction_status":"Pending"')
  return { count: page.count, offset: page.offset, rows: JSON.parse(json) as Array<any>, page }
}

/** A statement as a connection ran it. */
export interface RanStatement {
  readonly sql: string
  readonly parameters: ReadonlyArray<unknown>
}

/** A connection pool to `url` that records every statement it runs, with its parameters, in `into`. */
export const recordingKysely = (url: string, connections: number, into: Array<RanStatement>) =>
  new Kysely<Database>({
    dialect: makeDialect(url, connections),
    log: (event) => {
      into.push({ sql: event.query.sql, parameters: event.query.parameters })
    },
  })

/**
 * A new organisation's project of `documents` documents and `agents` agents, each document's result of each
 * agent one of 97 suppliers, one in 25 requiring attention: its ids and its first agent's.
 */
export const supplierProject = async (
  db: Kysely<Database>,
  counts: { readonly documents: number; readonly agents: number },
) => {
  const project = await newOrganizationProject(db)
  const seeded = await documentsAndAgents(db, project.projectId, counts)
  await writeAgentsResults(db, project.projectId, seeded, (j) => ({
    value: `Supplier ${j % 97}`,
    status: j % 25 === 0 ? "Requires attention" : "Resolved",
  }))
  return { ...project, agentId: seeded.agentIds[0]! }
}

/**
 * A test file's database for reading the plans of its statements: a pool, a pool of the same database that
 * records every statement it runs with its parameters (`statements`), and a client to EXPLAIN them with
 * (connected by the caller); all closed after the file.
 */
export const planningDatabase = async () => {
  const url = await useTestDatabase()
  const db = makeKysely(url, 4)
  const statements: Array<RanStatement> = []
  const recorded = recordingKysely(url, 2, statements)
  const explainer = new pg.Client({ connectionString: url })
  afterAll(async () => {
    await explainer.end()
    await recorded.destroy()
    await db.destroy()
  })
  return { db, statements, recorded, explainer }
}

/**
 * The first statement `f` runs on a connection to `url` that records what it runs, and that statement's
 * plan as it runs again under `EXPLAIN ANALYZE` in a transaction rolled back (with sequential scans made
 * as costly as the planner allows, unless `seqscan`): the scan nodes of `table` (type and rows read) and
 * any sort.
 */
export const planOfFirstStatement = async <A>(
  url: string,
  table: string,
  f: (db: Kysely<Database>) => Promise<A>,
  options: { readonly seqscan?: boolean } = {},
) => {
  const statements: Array<RanStatement> = []
  const recorded = recordingKysely(url, 1, statements)
  const explainer = new pg.Client({ connectionString: url })
  try {
    const outcome = await f(recorded)
    const [statement] = statements
    if (statement === undefined) throw new Error("no statement ran")
    await explainer.connect()
    await explainer.query("begin")
    if (options.seqscan !== true) await explainer.query("set local enable_seqscan = off")
    const { rows } = await explainer.query(`explain (analyze, format json) ${statement.sql}`, [
      ...statement.parameters,
    ])
    await explainer.query("rollback")
    const scans: Array<string> = []
    const sorts: Array<string> = []
    let read = 0
    const walk = (node: any) => {
      if (/Sort/.test(node["Node Type"])) sorts.push(node["Node Type"])
      if (node["Relation Name"] === table && /Scan/.test(node["Node Type"])) {
        scans.push(node["Node Type"])
        read +=
          ((node["Actual Rows"] ?? 0) + (node["Rows Removed by Filter"] ?? 0)) * (node["Actual Loops"] ?? 1)
      }
      for (const child of node.Plans ?? []) walk(child)
    }
    walk(rows[0]["QUERY PLAN"][0].Plan)
    return { outcome, scans, sorts, read }
  } finally {
    await explainer.end()
    await recorded.destroy()
  }
}
