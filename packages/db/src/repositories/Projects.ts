/**
 * Projects and folders. Every project has the system Document dimension (one value per document): it is
 * inserted here with the project, so no project exists without it. Driver errors are defects; "not found"
 * is `undefined`, for the caller to name.
 */
import { Effect } from "effect"
import { type Selectable, sql } from "kysely"
import type { Conn } from "../Db.ts"
import type { FoldersTable, ProjectRow } from "../Schema.ts"

export const DOCUMENT_DIMENSION = "Document"

const selectProjects = (db: Conn, orgId: string) =>
  db
    .selectFrom("projects as p")
    .selectAll("p")
    .select((eb) => [
      // From the tallies the documents' writes keep: a project page costs the same with 10 or 100,000.
      eb
        .selectFrom("document_tallies as t")
        .whereRef("t.project_id", "=", "p.id")
        .select(sql<number>`coalesce(sum(t.n), 0)::int`.as("n"))
        .as("document_count"),
      eb
        .selectFrom("agents as a")
        .whereRef("a.project_id", "=", "p.id")
        .where("a.is_draft", "=", false)
        .select(sql<number>`count(*)::int`.as("n"))
        .as("agent_count"),
    ])
    .where("p.organization_id", "=", orgId)

/** A project row with its document count and its count of published agents. */
export type ProjectWithCounts = Awaited<
  ReturnType<ReturnType<typeof selectProjects>["executeTakeFirstOrThrow"]>
>

/** The project of the organisation (live or archived) with its counts. */
export const findProject = (
  db: Conn,
  orgId: string,
  id: string,
): Effect.Effect<ProjectWithCounts | undefined> =>
  Effect.promise(() => selectProjects(db, orgId).where("p.id", "=", id).executeTakeFirst())

/** Whether the project of the organisation exists and is archived, without the counts of `findProject`. */
export type ProjectPresence = Pick<ProjectRow, "id" | "archived_at" | "archive_of_project_id">

const presence = (db: Conn, orgId: string, id: string) =>
  db
    .selectFrom("projects")
    .select(["id", "archived_at", "archive_of_project_id"])
    .where("id", "=", id)
    .where("organization_id", "=", orgId)

/** The project of the organisation, only what tells whether it is there and live. */
export const findProjectPresence = (
  db: Conn,
  orgId: string,
  id: string,
): Effect.Effect<ProjectPresence | undefined> =>
  Effect.promise(() => presence(db, orgId, id).executeTakeFirst())

/**
 * Holds the project row so concurrent tag and document changes of one project (and their dimensions)
 * serialise; the project's presence comes with it. A project of another organisation is neither locked nor
 * found. `share` serialises only with writers that take the lock in the default `update` mode (launches,
 * archiving, tag changes): uploads without tags are recorded side by side instead of one after another.
 * The `update` mode is `for no key update`: rows that merely reference the project (its documents, tags and
 * tallies) are not held up by it (see `lockDocument`).
 */
export const lockProjectPresence = (
  trx: Conn,
  orgId: string,
  id: string,
  mode: "update" | "share" = "update",
): Effect.Effect<ProjectPresence | undefined> =>
  Effect.promise(() => {
    const q = presence(trx, orgId, id)
    return (mode === "share" ? q.forShare() : q.forNoKeyUpdate()).executeTakeFirst()
  })

/** The project (of any organisation) and whether it is archived, locked until the transaction ends. */
export const lockProjectState = (
  trx: Conn,
  id: string,
): Effect.Effect<Pick<ProjectRow, "id" | "archived_at"> | undefined> =>
  Effect.promise(() =>
    trx
      .selectFrom("projects")
      .select(["id", "archived_at"])
      .where("id", "=", id)
      .forNoKeyUpdate()
      .executeTakeFirst(),
  )

/** Holds the project row (of any organisation) until the transaction ends; see `lockProjectPresence`. */
export const lockProject = (trx: Conn, id: string): Effect.Effect<void> =>
  Effect.promise(() =>
    trx.selectFrom("projects").select("id").where("id", "=", id).forNoKeyUpdate().executeTakeFirst(),
  )

/** The live projects (or the projects archived by hand) of the organisation, by name, with their counts. */
export const listProjects = (
  db: Conn,
  orgId: string,
  options: {
    readonly archived: boolean
    /** `null`: unfiled projects only; a string: that folder's; absent: all. */
    readonly folderId?: string | null | undefined
  },
): Effect.Effect<ReadonlyArray<ProjectWithCounts>> =>
  Effect.promise(() => {
    let q = options.archived
      ? selectProjects(db, orgId)
          .where("p.archived_at", "is not", null)
          .where("p.archive_of_project_id", "is", null)
      : selectProjects(db, orgId).where("p.archived_at", "is", null)
    if (options.folderId === null) q = q.where("p.folder_id", "is", null)
    else if (options.folderId !== undefined) q = q.where("p.folder_id", "=", options.folderId)
    return q.orderBy(sql`lower(p.name)`).orderBy("p.name").orderBy("p.id").execute()
  })

/** The ids among `ids` (already without repeats) of the organisation's projects, live or archived. */
export const projectIdsOfOrganization = (
  db: Conn,
  orgId: string,
  ids: ReadonlyArray<string>,
): Effect.Effect<ReadonlySet<string>> =>
  ids.length === 0
    ? Effect.succeed(new Set<string>())
    : Effect.promise(async () => {
        const rows = await db
          .selectFrom("projects")
          .select("id")
          .where("organization_id", "=", orgId)
          .where("id", "in", ids)
          .execute()
        return new Set(rows.map((r) => r.id))
      })

export interface NewProjectInput {
  readonly id?: string | undefined
  readonly organization_id: string
  readonly name: string
  readonly description: string
  readonly reference_date: string | null
  readonly auto_archive_after_days: number | null
  readonly auto_attach_document_dimension: boolean
  readonly is_pinned: boolean
  readonly folder_id: string | null
}

/** Inserts a project with its system Document dimension; returns its id. */
export const insertProject = (trx: Conn, input: NewProjectInput): Effect.Effect<string> =>
  Effect.promise(async () => {
    const { id, ...values } = input
    const row = await trx
      .insertInto("projects")
      .values({
        ...(id === undefined ? {} : { id }),
        ...values,
        project_modules: JSON.stringify({}),
        target_output_schema: null,
      })
      .returning("id")
      .executeTakeFirstOrThrow()
    await trx
      .insertInto("dimensions")
      .values({
        project_id: row.id,
        name: DOCUMENT_DIMENSION,
        description: "One value per document",
        source: "DOCUMENT",
        auto_attach_to_new_agents: input.auto_attach_document_dimension,
      })
      .execute()
    return row.id
  })

export type ProjectChanges = Partial<
  Pick<
    ProjectRow,
    "name" | "description" | "reference_date" | "auto_archive_after_days" | "is_pinned" | "folder_id"
  >
>

/** Sets the given fields (and `updated_at`). */
export const updateProject = (trx: Conn, id: string, changes: ProjectChanges): Effect.Effect<void> =>
  Effect.promise(() =>
    trx
      .updateTable("projects")
      .set({ ...changes, updated_at: sql`now()` })
      .where("id", "=", id)
      .execute(),
  )

/** Archives the project (keeping an earlier archival's time) or restores it. */
export const setProjectArchived = (
  trx: Conn,
  id: string,
  archivedAt: Date | null,
  archived: boolean,
): Effect.Effect<void> =>
  Effect.promise(() =>
    trx
      .updateTable("projects")
      .set({ archived_at: archived ? (archivedAt ?? sql`now()`) : null, updated_at: sql`now()` })
      .where("id", "=", id)
      .execute(),
  )

/**
 * Marks the project visited now and answers the time, unless a writer holds its row (an upload for share,
 * a launch or a tag change for update, see `lockProjectPresence`): then nothing is marked and nothing is
 * waited for (undefined). A read of the project counts as a visit; it must not wait for a launch of
 * thousands of documents, nor queue behind the other readers marking the same visit.
 */
export const markProjectVisited = (conn: Conn, id: string): Effect.Effect<Date | undefined> =>
  Effect.promise(() =>
    conn
      .updateTable("projects")
      .set({ last_visited_at: sql`now()` })
      .where("id", "=", (eb) =>
        eb.selectFrom("projects").select("id").where("id", "=", id).forNoKeyUpdate().skipLocked(),
      )
      .returning("last_visited_at")
      .executeTakeFirst(),
  ).pipe(Effect.map((row) => row?.last_visited_at ?? undefined))

/** The stored versions of the documents of the project and of its archive projects. */
export const documentVersionsOfProject = (
  trx: Conn,
  id: string,
): Effect.Effect<ReadonlyArray<{ readonly blob_key: string; readonly page_count: number }>> =>
  Effect.promise(() =>
    trx
      .selectFrom("documents")
      .select(["blob_key", "page_count"])
      .where((eb) =>
        eb.or([
          eb("project_id", "=", id),
          eb(
            "project_id",
            "in",
            eb.selectFrom("projects").select("id").where("archive_of_project_id", "=", id),
          ),
        ]),
      )
      .execute(),
  )

/** Deletes the project; the database cascades to everything in it (its archive projects included). */
export const deleteProject = (trx: Conn, id: string): Effect.Effect<void> =>
  Effect.promise(() => trx.deleteFrom("projects").where("id", "=", id).execute())

/** What a project's status record is computed from (`projectStatusRows`). */
export interface ProjectStatusRow {
  readonly id: string
  readonly output_mapping_status: string
  readonly has_schema: boolean
  /** Its documents by status (from the tallies the documents' writes keep). */
  readonly documents: Readonly<Record<string, number>>
  /** Its unfinished parses, and those that have lost their lease twice or more. */
  readonly active_parses: number
  readonly stuck_parses: number
  /** A run of it is queued or running. */
  readonly pipeline_running: boolean
}

/**
 * In one statement, for each of the projects that is the organisation's (the others are absent), what its
 * status record is computed from: its mapping state, its document tallies, its unfinished parses (through
 * the index of unfinished tasks; finished ones stay in the table) and whether a run is queued or running.
 */
export const projectStatusRows = (
  db: Conn,
  organizationId: string,
  ids: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<ProjectStatusRow>> =>
  Effect.promise(() =>
    sql<ProjectStatusRow>`
      select p.id, p.output_mapping_status, p.target_output_schema is not null as has_schema,
        (select coalesce(json_object_agg(t.status, t.n), '{}'::json)
         from (select status, sum(n)::int as n from document_tallies where project_id = p.id group by status) t) as documents,
        (select count(*)::int from tasks t where t.project_id = p.id and t.kind = 'parse'
           and t.status in ('pending', 'running')) as active_parses,
        (select count(*)::int from tasks t where t.project_id = p.id and t.kind = 'parse'
           and t.status in ('pending', 'running') and t.lease_expirations >= 2) as stuck_parses,
        exists (select 1 from runs r where r.project_id = p.id and r.status in ('queued', 'running')) as pipeline_running
      from projects p
      where p.id = any(${sql.val([...ids])}::uuid[]) and p.organization_id = ${organizationId}::uuid`
      .execute(db)
      .then((r) => r.rows),
  )

/** The archive project of a project (the first created), if it has one. */
export const findArchiveProject = (trx: Conn, sourceId: string): Effect.Effect<string | undefined> =>
  Effect.promise(async () => {
    const row = await trx
      .selectFrom("projects")
      .select("id")
      .where("archive_of_project_id", "=", sourceId)
      .orderBy("created_at")
      .executeTakeFirst()
    return row?.id
  })

/**
 * Creates the archive project of a project: same organisation, named "<name> (archive)", archived from the
 * start, with its system Document dimension. Returns its id.
 */
export const insertArchiveProject = (trx: Conn, sourceId: string): Effect.Effect<string> =>
  Effect.promise(async () => {
    const source = await trx
      .selectFrom("projects")
      .selectAll()
      .where("id", "=", sourceId)
      .executeTakeFirstOrThrow()
    const created = await trx
      .insertInto("projects")
      .values({
        organization_id: source.organization_id,
        name: `${source.name} (archive)`,
        description: `Archived documents of the project "${source.name}"`,
        reference_date: source.reference_date,
        auto_archive_after_days: null,
        project_modules: JSON.stringify(source.project_modules ?? {}),
        target_output_schema: null,
        archived_at: sql<Date>`now()`,
        archive_of_project_id: sourceId,
      })
      .returning("id")
      .executeTakeFirstOrThrow()
    await trx
      .insertInto("dimensions")
      .values({
        project_id: created.id,
        name: DOCUMENT_DIMENSION,
        description: "One value per document",
        source: "DOCUMENT",
      })
      .execute()
    return created.id
  })

// Folders

export type FolderRow = Selectable<FoldersTable>

export const findFolder = (db: Conn, orgId: string, id: string): Effect.Effect<FolderRow | undefined> =>
  Effect.promise(() =>
    db
      .selectFrom("folders")
      .selectAll()
      .where("id", "=", id)
      .where("organization_id", "=", orgId)
      .executeTakeFirst(),
  )

/** The organisation's folders by name (ignoring case). */
export const listFolders = (db: Conn, orgId: string): Effect.Effect<ReadonlyArray<FolderRow>> =>
  Effect.promise(() =>
    db
      .selectFrom("folders")
      .selectAll()
      .where("organization_id", "=", orgId)
      .orderBy(sql`lower(name)`)
      .orderBy("id")
      .execute(),
  )

export const insertFolder = (
  db: Conn,
  input: { readonly organization_id: string; readonly name: string; readonly parent_id: string | null },
): Effect.Effect<FolderRow> =>
  Effect.promise(() => db.insertInto("folders").values(input).returningAll().executeTakeFirstOrThrow())

/** Sets the given fields (and `updated_at`). */
export const updateFolder = (
  db: Conn,
  id: string,
  changes: { readonly name?: string; readonly parent_id?: string | null },
): Effect.Effect<FolderRow> =>
  Effect.promise(() =>
    db
      .updateTable("folders")
      .set({ ...changes, updated_at: sql`now()` })
      .where("id", "=", id)
      .returningAll()
      .executeTakeFirstOrThrow(),
  )

/** Deletes the folder; the database deletes its subfolders and unfiles the projects inside. */
export const deleteFolder = (db: Conn, id: string): Effect.Effect<void> =>
  Effect.promise(() => db.deleteFrom("folders").where("id", "=", id).execute())

/** Whether `folderId` is `startId` or one of its ancestors (so `folderId` may not move under `startId`). */
export const isFolderAtOrAbove = (db: Conn, folderId: string, startId: string): Effect.Effect<boolean> =>
  Effect.promise(async () => {
    const r = await sql<{ id: string }>`
      with recursive up(id, parent_id) as (
        select id, parent_id from folders where id = ${startId}
        union all select f.id, f.parent_id from folders f join up on f.id = up.parent_id
      ) select id from up where id = ${folderId}`.execute(db)
    return r.rows.length > 0
  })
