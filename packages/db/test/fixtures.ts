/** Rows the repository tests start from. */
import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import type { Kysely } from "kysely"
import {
  type CurrentResultsFilter,
  EXTRACTION_STATUS_SLOT,
  type ResolvedRow,
  type ResultsWindow,
  resultsListPage,
} from "../src/repositories/Results.ts"
import type { Database } from "../src/Schema.ts"

/** A new organisation with one project in it. */
export const newOrganizationProject = async (db: Kysely<Database>) => {
  const org = await db
    .insertInto("organizations")
    .values({ name: `Org ${randomUUID()}` })
    .returning("id")
    .executeTakeFirstOrThrow()
  const project = await db
    .insertInto("projects")
    .values({ organization_id: org.id, name: "P" })
    .returning("id")
    .executeTakeFirstOrThrow()
  return { organizationId: org.id, projectId: project.id }
}

/** The project's Document dimension (its documents' dimension), made. */
export const newDocumentDimension = async (db: Kysely<Database>, projectId: string) =>
  db
    .insertInto("dimensions")
    .values({ project_id: projectId, name: "Document", source: "DOCUMENT" })
    .returning("id")
    .executeTakeFirstOrThrow()

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
  const json = page.json.replace(EXTRACTION_STATUS_SLOT, '"extraction_status":"Pending"')
  return { count: page.count, offset: page.offset, rows: JSON.parse(json) as Array<any>, page }
}
