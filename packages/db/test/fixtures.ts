/** Rows the repository tests start from. */
import { randomUUID } from "node:crypto"
import type { Kysely } from "kysely"
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
