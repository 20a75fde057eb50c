/**
 * What the pipeline reads about projects, several projects at once: their live documents (and which are
 * being parsed), their agents, and the records of finished extraction and resolution work, raw or counted
 * per agent. The launch planner's snapshot and the agents' derived states are built from these rows.
 * Driver errors are defects.
 */
import { Effect } from "effect"
import { type RawBuilder, sql } from "kysely"
import type { Conn } from "../Db.ts"
import type { AgentRow } from "../Schema.ts"
import type { AgentDimensionAttachment, AgentReferenceRow } from "./Agents.ts"
import { type PagesWithin, type PagesWithinRow, pagesWithinOf, pagesWithinQuery } from "./Pages.ts"
import { DERIVE_TASK, PARSE_TASK, RESOLVE_TASK } from "./TaskKinds.ts"
import { unseen } from "./Unseen.ts"

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

// ---------------------------------------------------------------------------------------------------------
// Documents

/** A live document (not queued for archival) with its tags. */
export interface LiveDocumentRow {
  readonly id: string
  readonly project_id: string
  readonly file_name: string
  readonly status: string
  readonly version: number
  readonly tags: Readonly<Record<string, string>>
}

/** A document's tags as one object (`d` the document). */
const documentTags = sql<Record<string, string>>`coalesce((select jsonb_object_agg(g.key, g.value)
  from document_tags g where g.document_id = d.id), '{}'::jsonb)`

/** The projects' live documents, oldest first; `only`: just this one. */
export const liveDocumentsOfProjects = (
  conn: Conn,
  projectIds: ReadonlyArray<string>,
  only?: string,
): Effect.Effect<ReadonlyArray<LiveDocumentRow>> =>
  run(() => {
    const q = conn
      .selectFrom("documents as d")
      .select(["d.id", "d.project_id", "d.file_name", "d.status", "d.version", documentTags.as("tags")])
      .where("d.project_id", "in", projectIds)
      .where("d.archive_requested_at", "is", null)
      .orderBy("d.uploaded_at")
      .orderBy("d.id")
    return (only === undefined ? q : q.where("d.id", "=", only)).execute()
  })

/** What an extract task reads before it asks the model (see `extractionInputs`). */
export interface ExtractionInputs extends PagesWithin {
  /** The task's run, when it is running: its project and the project's reference date. */
  readonly run: { readonly projectId: string; readonly referenceDate: string } | undefined
  /** The document, when it is a live document of the run's project. */
  readonly document: LiveDocumentRow | undefined
  /**
   * When asked for: those of the agents that are the run's project's, as `agentsWithPartsOfProjects` reads
   * them, each with its atomic value of no dimension instances once made (`plain_atomic_value_id`).
   */
  readonly agents: ReadonlyArray<ExtractionAgentRow> | undefined
}

export interface ExtractionAgentRow extends AgentWithPartsRow {
  /** The agent's atomic value of no dimension instances (dimension key `[]`), once made; else null. */
  readonly plain_atomic_value_id: string | null
}

/**
 * An extract task's run (as `findRunningRun` reads it), its document (as `liveDocumentsOfProjects`) and
 * the document's size with its pages when they hold at most `maxChars` characters (`pagesWithin`) and,
 * given `agentIds`, those agents of the run's project with their parts (`agentsWithPartsOfProjects`), in one
 * statement: what every extract task reads before it asks the model.
 */
export const extractionInputs = (
  conn: Conn,
  input: {
    readonly runId: string
    readonly documentId: string
    readonly maxChars: number
    readonly agentIds?: ReadonlyArray<string> | undefined
  },
): Effect.Effect<ExtractionInputs> =>
  run(async () => {
    const { rows } = await sql<
      PagesWithinRow & {
        status: string
        project_id: string
        reference_date: string
        document: LiveDocumentRow | null
        agents: ReadonlyArray<ExtractionAgentRow & { created_at: string; updated_at: string }> | null
      }
    >`
      select r.status, r.project_id, coalesce(p.reference_date, p.created_at::date)::text as reference_date,
             (select jsonb_build_object('id', d.id, 'project_id', d.project_id, 'file_name', d.file_name,
                                        'status', d.status, 'version', d.version, 'tags', ${documentTags})
              from documents d
              where d.id = ${input.documentId}::uuid and d.project_id = r.project_id
                and d.archive_requested_at is null) as document,
             ${
               input.agentIds === undefined
                 ? sql`null::jsonb`
                 : sql`(select coalesce(jsonb_agg(to_jsonb(a) || jsonb_build_object(
                                 'attachments', ${agentAttachments}, 'references', ${agentReferences},
                                 'plain_atomic_value_id', (select av.id from atomic_values av
                                                           where av.agent_id = a.id and av.dimension_key = '[]'))
                               order by a.created_at, a.id), '[]'::jsonb)
                        from agents a
                        where a.project_id = r.project_id and a.id = any(${sql.val(input.agentIds)}::uuid[]))`
             } as agents,
             w.pages, w.chars, w.last, w.texts
      from runs r join projects p on p.id = r.project_id
      cross join lateral (${pagesWithinQuery(input.documentId, input.maxChars)}) w
      where r.id = ${input.runId}::uuid`.execute(conn)
    const row = rows[0]
    return row === undefined
      ? {
          run: undefined,
          document: undefined,
          agents: undefined,
          size: { pages: 0, chars: 0, last: null },
          pages: undefined,
        }
      : {
          ...pagesWithinOf(row),
          run:
            row.status === "running"
              ? { projectId: row.project_id, referenceDate: row.reference_date }
              : undefined,
          document: row.document ?? undefined,
          // Timestamps in JSON are text: as the driver reads them, dates.
          agents: row.agents?.map((a) => ({
            ...a,
            created_at: new Date(a.created_at),
            updated_at: new Date(a.updated_at),
          })),
        }
  })

/** The documents of the projects with a parse task pending or running. */
export const documentsBeingParsed = (
  conn: Conn,
  projectIds: ReadonlyArray<string>,
): Effect.Effect<ReadonlySet<string>> =>
  run(() =>
    conn
      .selectFrom("tasks")
      .select(sql<string>`payload->>'document_id'`.as("document_id"))
      .where("project_id", "in", projectIds)
      .where("kind", "=", PARSE_TASK)
      .where("status", "in", ["pending", "running"])
      .execute(),
  ).pipe(Effect.map((rows) => new Set(rows.map((r) => r.document_id))))

// ---------------------------------------------------------------------------------------------------------
// Agents

/** An agent with its dimension attachments (each with its dimension's fields) and its references. */
export interface AgentWithPartsRow extends AgentRow {
  /** In their order; ties by attachment (the order recorded dimensions keys were made in). */
  readonly attachments: ReadonlyArray<AgentDimensionAttachment>
  /** The referenced agents' ids, in their order. */
  readonly references: ReadonlyArray<string>
}

/**
 * An agent's dimension attachments, each with its dimension's fields, as one JSON array (`agent` the
 * agent's alias): in their order, ties by the older attachment (the pipeline's order, in which recorded
 * dimensions keys were made) or by the older dimension (what the API shows).
 */
const attachmentsJson = (agent: string, ties: "attachment" | "dimension") =>
  sql<ReadonlyArray<AgentDimensionAttachment>>`coalesce((
    select jsonb_agg(jsonb_build_object(
        'id', ad.id, 'agent_id', ad.agent_id, 'dimension_id', ad.dimension_id,
        'are_values_dynamic', ad.are_values_dynamic, 'values', ad.values, 'order', ad."order",
        'name', d.name, 'description', d.description, 'example_values', d.example_values,
        'value_type', d.value_type, 'source', d.source, 'tag_key', d.tag_key, 'project_id', d.project_id)
      order by ad."order", ${ties === "dimension" ? sql`d.created_at, ` : sql``}ad.id)
    from agent_dimensions ad join dimensions d on d.id = ad.dimension_id
    where ad.agent_id = ${sql.ref(`${agent}.id`)}), '[]'::jsonb)`

/** An agent's attachments as `AgentWithPartsRow` has them (`a` the agent). */
const agentAttachments = attachmentsJson("a", "attachment")

/** The ids an agent references, in their order (`a` the agent). */
const agentReferences = sql<ReadonlyArray<string>>`coalesce((
          select jsonb_agg(r.referenced_agent_id order by r.position, ra.created_at)
          from agent_references r join agents ra on ra.id = r.referenced_agent_id
          where r.agent_id = a.id), '[]'::jsonb)`

/**
 * The projects' agents (drafts included), oldest first, with each agent's attachments and references, in
 * one statement; `only`: just this agent, or just these.
 */
export const agentsWithPartsOfProjects = (
  conn: Conn,
  projectIds: ReadonlyArray<string>,
  only?: string | ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<AgentWithPartsRow>> =>
  run(() => {
    let q = conn
      .selectFrom("agents as a")
      .selectAll("a")
      .select([agentAttachments.as("attachments"), agentReferences.as("references")])
      .where("a.project_id", "in", projectIds)
    if (typeof only === "string") q = q.where("a.id", "=", only)
    else if (only !== undefined) q = q.where("a.id", "in", only)
    return q.orderBy("a.created_at").orderBy("a.id").execute()
  })

/** An agent as its project's list shows it: its row, its attachments and references, its state's inputs. */
export interface AgentListingRow extends AgentRow {
  readonly attachments: ReadonlyArray<AgentDimensionAttachment>
  readonly references: ReadonlyArray<AgentReferenceRow>
  readonly state: AgentStateInputRow
}

export interface AgentListing {
  /** The projects asked for that are the organisation's, in the order asked. */
  readonly projectIds: ReadonlyArray<string>
  /** Their agents, most recently created first. */
  readonly agents: ReadonlyArray<AgentListingRow>
}

/**
 * The agents of the projects that are the organisation's, most recently created first, each with its
 * dimension attachments (in its order, ties by the older dimension), the agents it references and its
 * state's inputs (`agentStateInputsQuery`), in one statement: which projects are the organisation's comes
 * with them (a project without agents as a row without one). `isEvaluation` keeps only (or all but)
 * evaluation agents.
 */
export const agentListing = (
  conn: Conn,
  organizationId: string,
  projectIds: ReadonlyArray<string>,
  filter: { readonly isEvaluation?: boolean | undefined } = {},
): Effect.Effect<AgentListing> =>
  projectIds.length === 0
    ? Effect.succeed({ projectIds: [], agents: [] })
    : run(() =>
        sql<AgentListingRow & { readonly listed_project: string }>`
          select p.id as listed_project, g.*,
            ${attachmentsJson("g", "dimension")} as attachments,
            coalesce((
              select jsonb_agg(jsonb_build_object(
                  'agent_id', r.agent_id, 'referenced_agent_id', r.referenced_agent_id, 'name', ra.name)
                order by r.position, ra.created_at)
              from agent_references r join agents ra on ra.id = r.referenced_agent_id
              where r.agent_id = g.id), '[]'::jsonb) as "references",
            (select to_jsonb(s) from (${agentStateInputsQuery(sql<string>`g.project_id`, sql<ReadonlyArray<string>>`array[g.id]`)}) s) as state
          from projects p
          left join agents g on g.project_id = p.id${
            filter.isEvaluation === undefined ? sql`` : sql` and g.is_evaluation = ${filter.isEvaluation}`
          }
          where p.id = any(${unseen(projectIds, "uuid[]")}) and p.organization_id = ${organizationId}::uuid
          order by g.created_at desc nulls last, g.id desc`
          .execute(conn)
          .then(({ rows }) => {
            const listed = new Set(rows.map((r) => r.listed_project))
            return {
              projectIds: [...new Set(projectIds)].filter((id) => listed.has(id)),
              agents: rows.filter((r) => r.id !== null).map(({ listed_project: _, ...agent }) => agent),
            }
          }),
      )

// ---------------------------------------------------------------------------------------------------------
// Records of finished work

export interface ExtractionPairRecordRow {
  readonly project_id: string
  readonly agent_id: string
  readonly document_id: string
  readonly agent_config_version: number
  readonly document_version: number
  readonly dimensions_key: string
  readonly extracted_at: Date
}

/** Every extraction pair recorded for the projects' agents. */
export const extractionPairsOfProjects = (
  conn: Conn,
  projectIds: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<ExtractionPairRecordRow>> =>
  run(() =>
    conn
      .selectFrom("extraction_pairs as p")
      .innerJoin("agents as a", "a.id", "p.agent_id")
      .select([
        "a.project_id",
        "p.agent_id",
        "p.document_id",
        "p.agent_config_version",
        "p.document_version",
        "p.dimensions_key",
        "p.extracted_at",
      ])
      .where("a.project_id", "in", projectIds)
      .execute(),
  )

export interface ResolutionRecordRow {
  readonly project_id: string
  readonly agent_id: string
  readonly agent_config_version: number
  readonly complete: boolean
  readonly resolved_at: Date
}

/** The resolutions recorded for the projects' agents; `agentIds` (non-empty): only theirs. */
export const resolutionsOfProjects = (
  conn: Conn,
  projectIds: ReadonlyArray<string>,
  agentIds?: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<ResolutionRecordRow>> =>
  run(() => {
    const q = conn
      .selectFrom("agent_resolutions as r")
      .innerJoin("agents as a", "a.id", "r.agent_id")
      .select(["a.project_id", "r.agent_id", "r.agent_config_version", "r.complete", "r.resolved_at"])
      .where("a.project_id", "in", projectIds)
    return (
      agentIds === undefined || agentIds.length === 0 ? q : q.where("r.agent_id", "in", agentIds)
    ).execute()
  })

// ---------------------------------------------------------------------------------------------------------
// What agents' states are derived from, in one statement

/** An agent's state inputs: its row's settings, dimensions, records and tallies (see `agentStateInputs`). */
export interface AgentStateInputRow {
  readonly id: string
  readonly project_id: string
  readonly config_version: number
  readonly is_draft: boolean
  readonly agent_type: string
  readonly enable_web_search: boolean
  /** Its dimensions in display order (ties by attachment): `[dimension id, dynamic, source, values]`. */
  readonly dimensions: ReadonlyArray<readonly [string, boolean, string, ReadonlyArray<string>]>
  /** Its resolution record, if any. */
  readonly resolution: { readonly config: number; readonly complete: boolean; readonly at: string } | null
  /** When it last extracted anything (ISO), or null. */
  readonly latest: string | null
  /** Processed documents with a current pair, by dimensions key, at its config version. */
  readonly done: Readonly<Record<string, number>>
  /** Its current results by resolution status. */
  readonly results: Readonly<Record<string, number>>
  /** Its web searches at its config version: `[recorded, done]`, or null. */
  readonly searches: readonly [number, number] | null
  /** It has a resolution or derivation task unfinished in its project's running run. */
  readonly active: boolean
  /** Its project's live documents: in all, `Processed`, no longer `Pending`. */
  readonly documents: readonly [number, number, number]
}

/**
 * Every input of the agents' states, for the agents of the projects (oldest first; `agentIds`: only
 * these), in one statement whatever their number: each agent's settings and dimensions, its resolution
 * record and latest extraction (an index probe), its tallies of pairs, results and web searches, whether a
 * task of it is unfinished in a running run, and its project's document tallies.
 */
/**
 * The query of `agentStateInputs`, to run alone or inside another statement: the agents of the projects
 * given as ids, or as an expression of the enclosing query (a project's id column).
 */
export const agentStateInputsQuery = (
  projects: ReadonlyArray<string> | RawBuilder<string>,
  agentIds?: ReadonlyArray<string> | RawBuilder<ReadonlyArray<string>>,
) =>
  sql<AgentStateInputRow>`
      select a.id, a.project_id, a.config_version, a.is_draft, a.agent_type, a.enable_web_search,
        coalesce((select jsonb_agg(jsonb_build_array(ad.dimension_id, ad.are_values_dynamic, d.source, ad.values)
                                   order by ad.order, ad.id)
                  from agent_dimensions ad join dimensions d on d.id = ad.dimension_id where ad.agent_id = a.id),
                 '[]'::jsonb) as dimensions,
        (select jsonb_build_object('config', r.agent_config_version, 'complete', r.complete, 'at', r.resolved_at)
         from agent_resolutions r where r.agent_id = a.id) as resolution,
        to_json((select max(p.extracted_at) from extraction_pairs p where p.agent_id = a.id)) #>> '{}' as latest,
        coalesce((select jsonb_object_agg(t.dimensions_key, t.n) from (
                    select dimensions_key, sum(n) as n from pair_tallies
                    where agent_id = a.id and agent_config_version = a.config_version
                    group by dimensions_key having sum(n) > 0) t), '{}'::jsonb) as done,
        coalesce((select jsonb_object_agg(t.resolution_status, t.n) from result_tallies t
                  where t.agent_id = a.id and t.n > 0), '{}'::jsonb) as results,
        (select jsonb_build_array(w.total, w.done) from web_search_tallies w
         where w.agent_id = a.id and w.agent_config_version = a.config_version) as searches,
        exists (select 1 from tasks t join runs r on r.id = t.run_id
                where t.project_id = a.project_id and t.kind in (${RESOLVE_TASK}, ${DERIVE_TASK})
                  and t.status in ('pending', 'running') and r.status = 'running'
                  and t.payload->>'agentId' = a.id::text) as active,
        (select jsonb_build_array(coalesce(sum(n), 0), coalesce(sum(n) filter (where status = 'Processed'), 0),
                                  coalesce(sum(n) filter (where status <> 'Pending'), 0))
         from document_tallies where project_id = a.project_id and is_live) as documents
      from agents a
      where ${Array.isArray(projects) ? sql`a.project_id = any(${sql.val(projects)}::uuid[])` : sql`a.project_id = ${projects}`}
        ${
          agentIds === undefined
            ? sql``
            : Array.isArray(agentIds)
              ? sql`and a.id = any(${sql.val(agentIds)}::uuid[])`
              : sql`and a.id = any(${agentIds})`
        }
      order by a.created_at, a.id`

export const agentStateInputs = (
  conn: Conn,
  projectIds: ReadonlyArray<string>,
  agentIds?: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<AgentStateInputRow>> =>
  run(() =>
    agentStateInputsQuery(projectIds, agentIds)
      .execute(conn)
      .then((r) => r.rows),
  )

/** A project of the organisation with whether a run of it is queued or running and its agents' state inputs. */
export interface ProjectAgentStatesRow {
  readonly id: string
  readonly pipeline_running: boolean
  readonly states: ReadonlyArray<AgentStateInputRow>
}

/**
 * In one statement, for each of the projects that is the organisation's (the others are absent): whether
 * a run of it is queued or running, and its agents' state inputs (`agentStateInputs`).
 */
export const projectAgentStates = (
  conn: Conn,
  organizationId: string,
  projectIds: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<ProjectAgentStatesRow>> =>
  run(() =>
    sql<ProjectAgentStatesRow>`
      select p.id,
        exists (select 1 from runs r where r.project_id = p.id and r.status in ('queued', 'running')) as pipeline_running,
        (select coalesce(json_agg(s), '[]'::json) from (${agentStateInputsQuery(sql<string>`p.id`)}) s) as states
      from projects p
      where p.id = any(${unseen(projectIds, "uuid[]")}) and p.organization_id = ${organizationId}::uuid`
      .execute(conn)
      .then((r) => r.rows),
  )
