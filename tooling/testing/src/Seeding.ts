/**
 * Rows a test writes straight into the database where no API call makes them (the pipeline's output and
 * processed documents): a contract with its pages, dimension instances, atomic values, extractions and
 * resolution results. Shared with the GraphQL gateway's tests, so it imports nothing that needs the DOM.
 */
import { randomUUID } from "node:crypto"
import type { Database } from "@dxs/db"
import type { Kysely } from "kysely"

/** A new organisation with one project; their ids. */
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

/** An agent at a configuration version, as extractions and results record it. */
export interface AgentVersion {
  readonly id: string
  readonly version: number
}

/** The agent with its current configuration version. */
export const agentVersion = async (db: Kysely<Database>, agentId: string): Promise<AgentVersion> => {
  const row = await db
    .selectFrom("agents")
    .select("config_version")
    .where("id", "=", agentId)
    .executeTakeFirstOrThrow()
  return { id: agentId, version: row.config_version }
}

/** The layout of the contract's first page: a sentence over two lines, then a signature line. */
export const contractLayout = [
  { text: "This agreement is governed by", x: 72, y: 100, width: 180, height: 12 },
  { text: "the laws of the", x: 256, y: 101, width: 90, height: 12 },
  { text: "State of New York.", x: 72, y: 116, width: 110, height: 12 },
  { text: "Signed by both parties.", x: 72, y: 300, width: 140, height: 12 },
]

/** Writers of the project's rows. */
export const projectRows = (db: Kysely<Database>, projectId: string) => {
  /**
   * A processed two-page contract.pdf (no stored file): page 1 laid out as `contractLayout`, page 2 the
   * text `secondPage` without a layout. Returns the document's id.
   */
  const contract = async (secondPage: string) => {
    const { id } = await db
      .insertInto("documents")
      .values({
        project_id: projectId,
        file_name: "contract.pdf",
        type: "PDF",
        status: "Processed",
        page_count: 2,
        blob_key: `test/${randomUUID()}`,
        content_type: "application/pdf",
        size_bytes: 10,
        sha256: "0".repeat(64),
        last_parsed_at: new Date(),
      })
      .returning("id")
      .executeTakeFirstOrThrow()
    await db
      .insertInto("pages")
      .values([
        {
          document_id: id,
          number: 1,
          text: `${contractLayout[0]!.text} ${contractLayout[1]!.text}\n${contractLayout[2]!.text}\n\n${contractLayout[3]!.text}`,
          layout: JSON.stringify(contractLayout),
          width: 612,
          height: 792,
          unit: "pt",
        },
        { document_id: id, number: 2, text: secondPage, layout: "[]", width: 612, height: 792, unit: "pt" },
      ])
      .execute()
    return id
  }

  /** A value of a dimension (of a document, for the system dimensions), as atomic values list it. */
  const instance = async (
    dimensionId: string,
    name: string,
    value: string,
    documentId: string | null = null,
  ) => {
    const row = await db
      .insertInto("dimension_instances")
      .values({ dimension_id: dimensionId, value, document_id: documentId })
      .returning("id")
      .executeTakeFirstOrThrow()
    return { id: row.id, dimension_id: dimensionId, name, dimension_value: value, document_id: documentId }
  }

  /** An atomic value of the agent over the instances, keyed by their ids unless `key` is given. */
  const atomicValue = async (
    agentId: string,
    instances: ReadonlyArray<Awaited<ReturnType<typeof instance>>>,
    key = JSON.stringify(instances.map((i) => i.id)),
  ) =>
    (
      await db
        .insertInto("atomic_values")
        .values({
          project_id: projectId,
          agent_id: agentId,
          dimension_key: key,
          dimension_values: JSON.stringify(instances),
        })
        .returning("id")
        .executeTakeFirstOrThrow()
    ).id

  /** An extraction for the atomic value: `fields` over an empty value from no document or page. */
  const extraction = async (agent: AgentVersion, atomicValueId: string, fields: Record<string, unknown>) =>
    (
      await db
        .insertInto("extractions")
        .values({
          project_id: projectId,
          agent_id: agent.id,
          agent_config_version: agent.version,
          atomic_value_id: atomicValueId,
          document_id: null,
          value: "",
          page_number: null,
          consistent: null,
          justification_for_consistency: null,
          source_type: "document",
          web_search_query: null,
          web_citations: "[]",
          derived_sources: "[]",
          ...fields,
        } as never)
        .returning("id")
        .executeTakeFirstOrThrow()
    ).id

  /** The resolution result of the atomic value (`value` stored as JSON), without references unless given. */
  const result = async (
    agent: AgentVersion,
    atomicValueId: string,
    fields: { result_name: string; value: unknown; resolution_status: string } & Record<string, unknown>,
  ) =>
    (
      await db
        .insertInto("resolution_results")
        .values({
          project_id: projectId,
          agent_id: agent.id,
          agent_config_version: agent.version,
          atomic_value_id: atomicValueId,
          justification: null,
          references: "{}",
          sources: "[]",
          web_supplement: null,
          ...fields,
          value: fields.value === null ? null : JSON.stringify(fields.value),
        } as never)
        .returning("id")
        .executeTakeFirstOrThrow()
    ).id

  return { contract, instance, atomicValue, extraction, result }
}
