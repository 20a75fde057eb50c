/**
 * Agents with their dimension attachments (`agent_dimensions`) and, for derived agents, the agents they
 * reference (`agent_references`).
 */
import { Effect } from "effect"
import { type Insertable, sql, type Updateable } from "kysely"
import type { Conn } from "../Db.ts"
import type { AgentRow, AgentsTable } from "../Schema.ts"

export type { AgentRow }

/** The columns an agent's write sets (everything the caller decides; ids, states and times are not). */
export type AgentFieldsRow = Omit<
  Insertable<AgentsTable>,
  | "id"
  | "project_id"
  | "template_id"
  | "extraction_status"
  | "requires_attention"
  | "improvement_tip_summary"
  | "inconsistency_summary"
  | "config_version"
  | "created_at"
  | "updated_at"
>

/** An attachment of a dimension to an agent, with the dimension's own fields. */
export interface AgentDimensionAttachment {
  /** The attachment's id (`dimension_mapping_id` in the API). */
  readonly id: string
  readonly agent_id: string
  readonly dimension_id: string
  readonly are_values_dynamic: boolean
  readonly values: ReadonlyArray<string>
  readonly order: number
  readonly name: string
  readonly description: string
  readonly example_values: string
  readonly value_type: string
  readonly source: string
  readonly tag_key: string | null
  readonly project_id: string
}

export interface AgentReferenceRow {
  readonly agent_id: string
  readonly referenced_agent_id: string
  /** The referenced agent's name. */
  readonly name: string
}

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

// ---------------------------------------------------------------------------------------------------------
// Agents

/** The project's agents (id, name and type), oldest first: the names that references and mentions resolve to. */
export const agentNamesOfProject = (db: Conn, projectId: string) =>
  run(() =>
    db
      .selectFrom("agents")
      .select(["id", "name", "agent_type"])
      .where("project_id", "=", projectId)
      .orderBy("created_at")
      .orderBy("id")
      .execute(),
  )

/** Every agent of the project, oldest first, with what a column of the results grid shows of it. */
export const gridColumnsOfProject = (db: Conn, projectId: string) =>
  run(() =>
    db
      .selectFrom("agents")
      .select(["id", "name", "value_type", "unit"])
      .where("project_id", "=", projectId)
      .orderBy("created_at")
      .orderBy("name")
      .orderBy("id")
      .execute(),
  )

/** The project's agents that are not drafts, oldest first, with what an output mapping needs of them. */
export const publishedAgentsOfProject = (db: Conn, projectId: string) =>
  run(() =>
    db
      .selectFrom("agents")
      .select(["id", "name", "value_type", "value_if_not_found"])
      .where("project_id", "=", projectId)
      .where("is_draft", "=", false)
      .orderBy("created_at")
      .orderBy("id")
      .execute(),
  )

/** An agent of the project; `lock` takes a row lock for an update. */
export const findAgent = (
  db: Conn,
  projectId: string,
  id: string,
  lock = false,
): Effect.Effect<AgentRow | undefined> =>
  run(() => {
    const q = db.selectFrom("agents").selectAll().where("project_id", "=", projectId).where("id", "=", id)
    // `for no key update`: rows that reference the agent (its results, tallies) are not held up; see lockDocument.
    return (lock ? q.forNoKeyUpdate() : q).executeTakeFirst()
  })

export const insertAgent = (db: Conn, projectId: string, fields: AgentFieldsRow) =>
  run(() =>
    db
      .insertInto("agents")
      .values({ project_id: projectId, ...fields })
      .returningAll()
      .executeTakeFirstOrThrow(),
  )

/**
 * Updates an agent's fields. `clearsExtractions`: its extractions become stale (a new config version,
 * extraction status back to `Pending`).
 */
export const updateAgent = (db: Conn, id: string, fields: AgentFieldsRow, clearsExtractions: boolean) =>
  run(() =>
    db
      .updateTable("agents")
      .set({
        ...(fields as Updateable<AgentsTable>),
        updated_at: sql`now()`,
        ...(clearsExtractions
          ? { config_version: sql`config_version + 1`, extraction_status: "Pending" }
          : {}),
      })
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirstOrThrow(),
  )

export const deleteAgent = (db: Conn, id: string) =>
  run(() => db.deleteFrom("agents").where("id", "=", id).execute()).pipe(Effect.asVoid)

// ---------------------------------------------------------------------------------------------------------
// Dimension attachments

/**
 * The dimension attachments of the given agents, or of every agent of a project, with their dimensions'
 * fields: each agent's in its order, ties by the older dimension (the pipeline reads them with ties by
 * attachment: ProjectReads.agentsWithPartsOfProjects).
 */
export const attachmentsOf = (
  db: Conn,
  of: { readonly agentIds: ReadonlyArray<string> } | { readonly projectId: string },
): Effect.Effect<ReadonlyArray<AgentDimensionAttachment>> =>
  "agentIds" in of && of.agentIds.length === 0
    ? Effect.succeed([])
    : run(() => {
        const q = db
          .selectFrom("agent_dimensions as ad")
          .innerJoin("dimensions as d", "d.id", "ad.dimension_id")
          .select([
            "ad.id",
            "ad.agent_id",
            "ad.dimension_id",
            "ad.are_values_dynamic",
            "ad.values",
            "ad.order",
            "d.name",
            "d.description",
            "d.example_values",
            "d.value_type",
            "d.source",
            "d.tag_key",
            "d.project_id",
          ])
        const ordered = (
          "agentIds" in of
            ? q.where("ad.agent_id", "in", of.agentIds)
            : q.innerJoin("agents as a", "a.id", "ad.agent_id").where("a.project_id", "=", of.projectId)
        ).orderBy("ad.order")
        return ordered.orderBy("d.created_at").orderBy("ad.id").execute()
      })

/** The attachment of the dimension most recently made to another agent than `exceptAgentId`. */
export const latestAttachmentElsewhere = (db: Conn, dimensionId: string, exceptAgentId: string) =>
  run(() =>
    db
      .selectFrom("agent_dimensions as ad")
      .innerJoin("agents as a", "a.id", "ad.agent_id")
      .select(["ad.are_values_dynamic", "ad.values"])
      .where("ad.dimension_id", "=", dimensionId)
      .where("a.id", "<>", exceptAgentId)
      .orderBy("a.created_at", "desc")
      .orderBy("a.id", "desc")
      .limit(1)
      .executeTakeFirst(),
  )

/** Detaches from the agent every dimension but those kept. */
export const detachDimensionsExcept = (db: Conn, agentId: string, keep: ReadonlyArray<string>) =>
  run(() => {
    let q = db.deleteFrom("agent_dimensions").where("agent_id", "=", agentId)
    if (keep.length > 0) q = q.where("dimension_id", "not in", keep)
    return q.execute()
  }).pipe(Effect.asVoid)

export interface AttachmentSettings {
  readonly are_values_dynamic: boolean
  readonly values: ReadonlyArray<string>
  readonly order: number
}

/** Updates the attachment `existingId`, or (undefined) attaches the dimension to the agent. */
export const saveAttachment = (
  db: Conn,
  existingId: string | undefined,
  agentId: string,
  dimensionId: string,
  settings: AttachmentSettings,
) =>
  run(async () => {
    const values = { ...settings, values: JSON.stringify(settings.values) }
    if (existingId !== undefined)
      await db.updateTable("agent_dimensions").set(values).where("id", "=", existingId).execute()
    else
      await db
        .insertInto("agent_dimensions")
        .values({ agent_id: agentId, dimension_id: dimensionId, ...values })
        .execute()
  })

/**
 * Attaches the dimension, last, to every agent of the project but `exceptAgentId`; agents that have it
 * keep their attachment.
 */
export const attachToOtherAgents = (
  db: Conn,
  projectId: string,
  exceptAgentId: string,
  dimensionId: string,
  dynamic: boolean,
  values: ReadonlyArray<string>,
) =>
  run(() =>
    sql`
      insert into agent_dimensions (agent_id, dimension_id, are_values_dynamic, values, "order")
      select a.id, ${dimensionId}, ${dynamic}, ${JSON.stringify(values)}::jsonb,
        coalesce((select max(x."order") + 1 from agent_dimensions x where x.agent_id = a.id), 0)
      from agents a
      where a.project_id = ${projectId} and a.id <> ${exceptAgentId}
      on conflict (agent_id, dimension_id) do nothing`.execute(db),
  ).pipe(Effect.asVoid)

// ---------------------------------------------------------------------------------------------------------
// Derived agents' references

/** The agents' references, each agent's in their order, with the referenced agents' names. */
export const referencesOf = (
  db: Conn,
  agentIds: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<AgentReferenceRow>> =>
  agentIds.length === 0
    ? Effect.succeed([])
    : run(() =>
        db
          .selectFrom("agent_references as r")
          .innerJoin("agents as a", "a.id", "r.referenced_agent_id")
          .select(["r.agent_id", "r.referenced_agent_id", "a.name"])
          .where("r.agent_id", "in", agentIds)
          .orderBy("r.position")
          .orderBy("a.created_at")
          .execute(),
      )

/** The ids the agent references, in their order. */
export const referencedIds = (db: Conn, agentId: string) =>
  run(() =>
    db
      .selectFrom("agent_references")
      .select("referenced_agent_id")
      .where("agent_id", "=", agentId)
      .orderBy("position")
      .execute(),
  ).pipe(Effect.map((rows) => rows.map((r) => r.referenced_agent_id)))

/** Makes the agent's references exactly `ids`, in order. */
export const replaceReferences = (db: Conn, agentId: string, ids: ReadonlyArray<string>) =>
  run(async () => {
    await db.deleteFrom("agent_references").where("agent_id", "=", agentId).execute()
    if (ids.length > 0)
      await db
        .insertInto("agent_references")
        .values(ids.map((id, position) => ({ agent_id: agentId, referenced_agent_id: id, position })))
        .execute()
  })

/**
 * Takes the project's row lock that serialises reference changes within the project, so that two saves
 * cannot close a cycle together.
 */
export const lockReferencesOfProject = (db: Conn, projectId: string) =>
  run(() =>
    db.selectFrom("projects").select("id").where("id", "=", projectId).forNoKeyUpdate().execute(),
  ).pipe(Effect.asVoid)

/** Every reference of the project's derived agents (agent → referenced agent), in reference order. */
export const derivedReferenceEdges = (db: Conn, projectId: string) =>
  run(() =>
    db
      .selectFrom("agent_references as r")
      .innerJoin("agents as a", "a.id", "r.agent_id")
      .select(["r.agent_id", "r.referenced_agent_id"])
      .where("a.project_id", "=", projectId)
      .where("a.agent_type", "=", "derived")
      .orderBy("r.position")
      .execute(),
  )

/** The file names of the project's documents: a derived prompt's `@` mentions may name them. */
export const documentNamesOfProject = (db: Conn, projectId: string) =>
  run(() =>
    db.selectFrom("documents").select("file_name").where("project_id", "=", projectId).execute(),
  ).pipe(Effect.map((rows) => rows.map((r) => r.file_name)))
