import type { Database } from "@dxs/db"
import { BlobStore, type Conn, query, transaction, withDb } from "@dxs/db"
import type { ProjectCreate, ProjectPatch } from "@dxs/domain/contract/Project"
import type { Project, ProjectStatus } from "@dxs/domain/Records"
import { runningPipelines } from "@dxs/pipeline/run/AgentStates"
import { byProject } from "@dxs/pipeline/run/ProjectState"

export { byProject }

import { Effect } from "effect"
import { type Kysely, sql } from "kysely"
import { CurrentOrganization } from "./CurrentOrganization.ts"
import { BadRequest, Conflict, NotFound } from "./Errors.ts"
import { validName } from "./Inputs.ts"
import { documentVersionFiles } from "./PageImageFiles.ts"
import { iso, isoOrNull, todayUtc } from "./Time.ts"

export type { ProjectCreate, ProjectPatch }

/** `folder_id` filter of the project list: every live project, unfiled ones only, or one folder's. */
export type FolderFilter =
  | { readonly _tag: "All" }
  | { readonly _tag: "Unfiled" }
  | { readonly _tag: "In"; readonly id: string }

export const DOCUMENT_DIMENSION = "Document"

const selectProjects = (db: Conn, orgId: string) =>
  db
    .selectFrom("projects as p")
    .selectAll("p")
    .select((eb) => [
      eb
        .selectFrom("documents as d")
        .whereRef("d.project_id", "=", "p.id")
        .select(sql<number>`count(*)::int`.as("n"))
        .as("document_count"),
      eb
        .selectFrom("agents as a")
        .whereRef("a.project_id", "=", "p.id")
        .where("a.is_draft", "=", false)
        .select(sql<number>`count(*)::int`.as("n"))
        .as("agent_count"),
    ])
    .where("p.organization_id", "=", orgId)

type ProjectQueryRow = Awaited<ReturnType<ReturnType<typeof selectProjects>["executeTakeFirstOrThrow"]>>

/** `none` while a project has no output schema; then the mapping's own status (`pending`, `success`, `failed`). */
export const NO_SCHEMA = "none"
const mappingStatus = (hasSchema: boolean, status: string) => (hasSchema ? status : NO_SCHEMA)

export const toProject = (r: ProjectQueryRow): Project => ({
  id: r.id,
  name: r.name,
  description: r.description,
  created_at: iso(r.created_at),
  last_visited_at: isoOrNull(r.last_visited_at),
  reference_date: r.reference_date,
  auto_archive_after_days: r.auto_archive_after_days,
  document_count: r.document_count ?? 0,
  agent_count: r.agent_count ?? 0,
  is_pinned: r.is_pinned,
  folder_id: r.folder_id,
  project_modules: (r.project_modules ?? {}) as Record<string, boolean>,
  target_output_schema: r.target_output_schema ?? null,
  output_mapping_status: mappingStatus(r.target_output_schema != null, r.output_mapping_status),
})

const validArchiveDays = (days: number | null | undefined) =>
  days != null && days < 1
    ? Effect.fail(
        BadRequest.of("auto_archive_after_days must be a positive integer or null", [
          { path: "auto_archive_after_days", message: "must be at least 1" },
        ]),
      )
    : Effect.void

const folderExists = (db: Conn, orgId: string, folderId: string | null | undefined) =>
  folderId == null
    ? Effect.void
    : Effect.flatMap(
        Effect.promise(() =>
          db
            .selectFrom("folders")
            .select("id")
            .where("id", "=", folderId)
            .where("organization_id", "=", orgId)
            .executeTakeFirst(),
        ),
        (f) =>
          f
            ? Effect.void
            : Effect.fail(
                BadRequest.of(`folder_id ${folderId} does not name a folder of this organisation`, [
                  { path: "folder_id", message: "unknown folder" },
                ]),
              ),
      )

/** A project of the current organisation (live or archived), or NotFound. */
export const findProject = (db: Conn | Kysely<Database>, orgId: string, id: string) =>
  Effect.flatMap(
    Effect.promise(() => selectProjects(db, orgId).where("p.id", "=", id).executeTakeFirst()),
    (row) => (row ? Effect.succeed(row) : Effect.fail(NotFound.of("Project", id))),
  )

/**
 * The ids among `ids` of projects of the organisation (live or archived), without repeats, in the given
 * order: what the batch reads (`listForProjects`…) answer for; the others are absent from their result.
 */
export const projectsOfOrganization = (
  db: Conn | Kysely<Database>,
  orgId: string,
  ids: ReadonlyArray<string>,
) =>
  Effect.promise(async (): Promise<ReadonlyArray<string>> => {
    const unique = [...new Set(ids)]
    if (unique.length === 0) return []
    const rows = await db
      .selectFrom("projects")
      .select("id")
      .where("organization_id", "=", orgId)
      .where("id", "in", unique)
      .execute()
    const found = new Set(rows.map((r) => r.id))
    return unique.filter((id) => found.has(id))
  })

/** The single-project form of a batch read: its entry for the project, or NotFound. */
export const oneProject = <A>(projectId: string, results: ReadonlyMap<string, A>) =>
  results.has(projectId)
    ? Effect.succeed(results.get(projectId)!)
    : Effect.fail(NotFound.of("Project", projectId))

/** A live (not archived) project of the current organisation, or NotFound. */
export const findLiveProject = (db: Conn, orgId: string, id: string) =>
  Effect.flatMap(findProject(db, orgId, id), (row) =>
    row.archived_at === null ? Effect.succeed(row) : Effect.fail(NotFound.of("Live project", id)),
  )

/**
 * Inserts a project with the system Document dimension (every project has it: one value per document).
 * The caller validated the input and holds the transaction.
 */
export const insertProject = (trx: Conn, orgId: string, input: ProjectCreate, id?: string) =>
  Effect.gen(function* () {
    yield* folderExists(trx, orgId, input.folder_id)
    const attach = input.auto_attach_document_dimension ?? false
    const row = yield* Effect.promise(() =>
      trx
        .insertInto("projects")
        .values({
          ...(id === undefined ? {} : { id }),
          organization_id: orgId,
          name: input.name.trim(),
          description: input.description ?? "",
          reference_date: input.reference_date === undefined ? todayUtc() : input.reference_date,
          auto_archive_after_days: input.auto_archive_after_days ?? null,
          auto_attach_document_dimension: attach,
          is_pinned: input.is_pinned ?? false,
          folder_id: input.folder_id ?? null,
          project_modules: JSON.stringify({}),
          target_output_schema: null,
        })
        .returning("id")
        .executeTakeFirstOrThrow(),
    )
    yield* Effect.promise(() =>
      trx
        .insertInto("dimensions")
        .values({
          project_id: row.id,
          name: DOCUMENT_DIMENSION,
          description: "One value per document",
          source: "DOCUMENT",
          auto_attach_to_new_agents: attach,
        })
        .execute(),
    )
    return row.id
  })

/** The project status record of each project of the organisation among `ids`. */
const statusForProjects = (ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    return yield* withDb((db) =>
      Effect.gen(function* () {
        const own = yield* projectsOfOrganization(db, org.id, ids)
        if (own.length === 0) return new Map<string, ProjectStatus>()
        const [projects, counts, parseTasks, running] = yield* Effect.promise(() =>
          Promise.all([
            db
              .selectFrom("projects")
              .select([
                "id",
                "output_mapping_status",
                sql<boolean>`target_output_schema is not null`.as("has_schema"),
              ])
              .where("id", "in", own)
              .execute(),
            db
              .selectFrom("documents")
              .select(["project_id", "status", sql<number>`count(*)::int`.as("n")])
              .where("project_id", "in", own)
              .groupBy(["project_id", "status"])
              .execute(),
            db
              .selectFrom("tasks")
              .select([
                "project_id",
                sql<number>`count(*) filter (where status in ('pending','running'))::int`.as("active"),
                sql<number>`count(*) filter (where status in ('pending','running') and lease_expirations >= 2)::int`.as(
                  "stuck",
                ),
              ])
              .where("project_id", "in", own)
              .where("kind", "=", "parse")
              .groupBy("project_id")
              .execute(),
            runningPipelines(db, own),
          ]),
        )
        const statuses = new Map<string, ProjectStatus>()
        for (const project of projects) {
          const by = { Pending: 0, Processed: 0, Failed: 0 }
          for (const c of counts)
            if (c.project_id === project.id && c.status in by) by[c.status as keyof typeof by] = c.n
          const tasks = parseTasks.find((t) => t.project_id === project.id) ?? { active: 0, stuck: 0 }
          const parsing_state: ProjectStatus["parsing_state"] =
            tasks.stuck > 0
              ? "stuck"
              : tasks.active > 0 || by.Pending > 0
                ? "parsing"
                : by.Failed > 0
                  ? "failed"
                  : "idle"
          statuses.set(project.id, {
            pipeline_running: running.has(project.id),
            schema_status: mappingStatus(project.has_schema, project.output_mapping_status),
            parsing_state,
            document_count: by.Pending + by.Processed + by.Failed,
            documents_by_status: by,
          })
        }
        return statuses
      }),
    )
  })

export class Projects extends Effect.Service<Projects>()("@dxs/services/Projects", {
  succeed: {
    /** Live projects (or, with `archived`, the projects archived by hand), by name. */
    list: (filter: FolderFilter, options: { readonly archived?: boolean | undefined } = {}) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        const rows = yield* query((db) => {
          let q = options.archived
            ? selectProjects(db, org.id)
                .where("p.archived_at", "is not", null)
                .where("p.archive_of_project_id", "is", null)
            : selectProjects(db, org.id).where("p.archived_at", "is", null)
          if (filter._tag === "Unfiled") q = q.where("p.folder_id", "is", null)
          if (filter._tag === "In") q = q.where("p.folder_id", "=", filter.id)
          return q.orderBy(sql`lower(p.name)`).orderBy("p.name").orderBy("p.id").execute()
        })
        return rows.map(toProject)
      }),

    /**
     * Archives a project (hidden from the live list, still retrievable, no uploads or launches) or restores it. The
     * archive projects that hold archived documents stay archived.
     */
    setArchived: (id: string, archived: boolean) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        return yield* transaction((trx) =>
          Effect.gen(function* () {
            const row = yield* findProject(trx, org.id, id)
            if (row.archive_of_project_id !== null)
              return yield* Conflict.of(
                `Project ${id} holds the archived documents of another project and stays archived`,
              )
            yield* Effect.promise(() =>
              trx
                .updateTable("projects")
                .set({
                  archived_at: archived ? (row.archived_at ?? sql`now()`) : null,
                  updated_at: sql`now()`,
                })
                .where("id", "=", id)
                .execute(),
            )
            return toProject(yield* findProject(trx, org.id, id))
          }),
        )
      }),

    create: (input: ProjectCreate) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        yield* validName(input.name)
        yield* validArchiveDays(input.auto_archive_after_days)
        return yield* transaction((trx) =>
          Effect.gen(function* () {
            const id = yield* insertProject(trx, org.id, input)
            return toProject(yield* findProject(trx, org.id, id))
          }),
        )
      }),

    /** Retrieving a project counts as visiting it. */
    get: (id: string) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        return yield* transaction((trx) =>
          Effect.gen(function* () {
            yield* findProject(trx, org.id, id)
            yield* Effect.promise(() =>
              trx.updateTable("projects").set({ last_visited_at: sql`now()` }).where("id", "=", id).execute(),
            )
            return toProject(yield* findProject(trx, org.id, id))
          }),
        )
      }),

    update: (id: string, patch: ProjectPatch, mode: "patch" | "put") =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        yield* validName(patch.name)
        yield* validArchiveDays(patch.auto_archive_after_days)
        const values =
          mode === "put"
            ? {
                name: patch.name?.trim(),
                description: patch.description ?? "",
                reference_date: patch.reference_date ?? null,
                auto_archive_after_days: patch.auto_archive_after_days ?? null,
                is_pinned: patch.is_pinned ?? false,
                folder_id: patch.folder_id ?? null,
              }
            : {
                name: patch.name?.trim(),
                description: patch.description,
                reference_date: patch.reference_date,
                auto_archive_after_days: patch.auto_archive_after_days,
                is_pinned: patch.is_pinned,
                folder_id: patch.folder_id,
              }
        return yield* transaction((trx) =>
          Effect.gen(function* () {
            yield* findProject(trx, org.id, id)
            yield* folderExists(trx, org.id, patch.folder_id)
            const set = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined))
            yield* Effect.promise(() =>
              trx
                .updateTable("projects")
                .set({ ...set, updated_at: sql`now()` })
                .where("id", "=", id)
                .execute(),
            )
            return toProject(yield* findProject(trx, org.id, id))
          }),
        )
      }),

    /**
     * Deletes the project with everything in it, its archive project included; then the stored files and
     * page images.
     */
    remove: (id: string) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        const blobs = yield* BlobStore
        const keys = yield* transaction((trx) =>
          Effect.gen(function* () {
            yield* findProject(trx, org.id, id)
            const rows = yield* Effect.promise(() =>
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
            yield* Effect.promise(() => trx.deleteFrom("projects").where("id", "=", id).execute())
            return rows.flatMap(documentVersionFiles)
          }),
        )
        // After the commit: a crash here leaves an orphan file, never a row pointing at a missing file.
        yield* Effect.forEach(keys, (key) => blobs.remove(key), { concurrency: 4, discard: true })
      }),

    status: (id: string) => Effect.flatMap(statusForProjects([id]), (statuses) => oneProject(id, statuses)),

    /** The status records of several projects (those of the organisation), in one read per source. */
    statusForProjects: (ids: ReadonlyArray<string>) => statusForProjects(ids),
  },
}) {}
