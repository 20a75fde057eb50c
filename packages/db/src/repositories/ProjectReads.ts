/**
 * What the pipeline reads about projects, several projects at once: their live documents (and which are
 * being parsed), their agents, and the records of finished extraction and resolution work, raw or counted
 * per agent. The launch planner's snapshot and the agents' derived states are built from these rows.
 * Driver errors are defects.
 */
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../Db.ts"
import type { AgentRow } from "../Schema.ts"
import { DERIVE_TASK, PARSE_TASK, RESOLVE_TASK } from "./TaskKinds.ts"

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

/** The projects' live documents, oldest first; `only`: just this one. */
export const liveDocumentsOfProjects = (
  conn: Conn,
  projectIds: ReadonlyArray<string>,
  only?: string,
): Effect.Effect<ReadonlyArray<LiveDocumentRow>> =>
  run(() => {
    const q = conn
      .selectFrom("documents as d")
      .select([
        "d.id",
        "d.project_id",
        "d.file_name",
        "d.status",
        "d.version",
        sql<Record<string, string>>`coalesce((select jsonb_object_agg(g.key, g.value) from document_tags g
        where g.document_id = d.id), '{}'::jsonb)`.as("tags"),
      ])
      .where("d.project_id", "in", projectIds)
      .where("d.archive_requested_at", "is", null)
      .orderBy("d.uploaded_at")
      .orderBy("d.id")
    return (only === undefined ? q : q.where("d.id", "=", only)).execute()
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

/** A project's live documents counted: in all, `Processed`, and no longer `Pending`. */
export interface DocumentCountsRow {
  readonly project_id: string
  readonly total: number
  readonly processed: number
  readonly parsed_or_failed: number
}

/**
 * The projects' live document counts (projects without live documents have no row), from the tallies the
 * documents' writes keep: a few rows per project, whatever its size.
 */
export const liveDocumentCountsOfProjects = (
  conn: Conn,
  projectIds: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<DocumentCountsRow>> =>
  run(() =>
    conn
      .selectFrom("document_tallies")
      .select([
        "project_id",
        sql<number>`sum(n)::int`.as("total"),
        sql<number>`coalesce(sum(n) filter (where status = 'Processed'), 0)::int`.as("processed"),
        sql<number>`coalesce(sum(n) filter (where status <> 'Pending'), 0)::int`.as("parsed_or_failed"),
      ])
      .where("project_id", "in", projectIds)
      .where("is_live", "=", true)
      .groupBy("project_id")
      .having(sql<boolean>`sum(n) > 0`)
      .execute(),
  )

// ---------------------------------------------------------------------------------------------------------
// Agents

/** The projects' agents (drafts included), oldest first; `only`: just this agent, or just these (non-empty). */
export const agentsOfProjectsOldestFirst = (
  conn: Conn,
  projectIds: ReadonlyArray<string>,
  only?: string | ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<AgentRow>> =>
  run(() => {
    let q = conn.selectFrom("agents").selectAll().where("project_id", "in", projectIds)
    if (typeof only === "string") q = q.where("id", "=", only)
    else if (only !== undefined) q = q.where("id", "in", only)
    return q.orderBy("created_at").orderBy("id").execute()
  })

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
// Records counted per agent (agentIds, when given, is non-empty)

/** Each agent's current results counted by resolution status (from the tallies its results' writes keep). */
export const resultCountsByStatus = (
  conn: Conn,
  projectIds: ReadonlyArray<string>,
  agentIds?: ReadonlyArray<string>,
): Effect.Effect<
  ReadonlyArray<{ readonly agent_id: string; readonly resolution_status: string; readonly n: number }>
> =>
  run(() =>
    conn
      .selectFrom("result_tallies as t")
      .innerJoin("agents as a", "a.id", "t.agent_id")
      .select(["t.agent_id", "t.resolution_status", "t.n"])
      .where("a.project_id", "in", projectIds)
      .where("t.n", ">", 0)
      .$if(agentIds !== undefined, (q) => q.where("t.agent_id", "in", agentIds!))
      .execute(),
  )

/** Per agent with web search enabled, its web searches at its current config version: recorded, and done. */
export const webSearchCounts = (
  conn: Conn,
  projectIds: ReadonlyArray<string>,
  agentIds?: ReadonlyArray<string>,
): Effect.Effect<
  ReadonlyArray<{ readonly agent_id: string; readonly total: number; readonly done: number }>
> =>
  run(() =>
    conn
      .selectFrom("web_search_tallies as w")
      .innerJoin("agents as a", (j) =>
        j.onRef("a.id", "=", "w.agent_id").onRef("a.config_version", "=", "w.agent_config_version"),
      )
      .select(["w.agent_id", "w.total", "w.done"])
      .where("a.project_id", "in", projectIds)
      .where("a.enable_web_search", "=", true)
      .where("w.total", ">", 0)
      .$if(agentIds !== undefined, (q) => q.where("w.agent_id", "in", agentIds!))
      .execute(),
  )

/**
 * The agents with unfinished resolution or derivation tasks in their project's running run (an extraction
 * task holds several agents and names none). Read through the index of unfinished tasks by project and kind.
 */
export const agentsWithUnfinishedTasks = (
  conn: Conn,
  projectIds: ReadonlyArray<string>,
): Effect.Effect<ReadonlySet<string>> =>
  run(() =>
    conn
      .selectFrom("tasks as t")
      .innerJoin("runs as r", "r.id", "t.run_id")
      .select(sql<string | null>`distinct t.payload->>'agentId'`.as("agent_id"))
      .where("t.project_id", "in", projectIds)
      .where("t.kind", "in", [RESOLVE_TASK, DERIVE_TASK])
      .where("t.status", "in", ["pending", "running"])
      .where("r.status", "=", "running")
      .execute(),
  ).pipe(Effect.map((rows) => new Set(rows.map((r) => r.agent_id).filter((id): id is string => id != null))))

/**
 * Per agent and dimensions key: how many of the project's processed documents have a pair at the agent's
 * current config version and the document's current version (`done`, from the tallies the pairs' writes
 * keep), and the agent's latest extraction (one index probe per agent).
 */
export const extractionPairSummaries = (
  conn: Conn,
  projectIds: ReadonlyArray<string>,
  agentIds?: ReadonlyArray<string>,
): Effect.Effect<
  ReadonlyArray<{
    readonly agent_id: string
    readonly dimensions_key: string
    readonly done: number
    readonly latest: Date
  }>
> =>
  run(() =>
    sql<{ agent_id: string; dimensions_key: string; done: number; latest: Date }>`
      select a.id as agent_id, coalesce(t.dimensions_key, '') as dimensions_key, coalesce(t.done, 0)::int as done,
             l.latest
      from agents a
      cross join lateral (select max(p.extracted_at) as latest from extraction_pairs p where p.agent_id = a.id) l
      left join lateral (
        select t.dimensions_key, sum(t.n) as done from pair_tallies t
        where t.agent_id = a.id and t.agent_config_version = a.config_version
        group by t.dimensions_key having sum(t.n) > 0
      ) t on true
      where a.project_id in (${sql.join(projectIds)})
        ${agentIds === undefined ? sql`` : sql`and a.id in (${sql.join(agentIds)})`}
        and l.latest is not null`
      .execute(conn)
      .then((r) => r.rows),
  )
