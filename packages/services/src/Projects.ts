import { BlobStore, type Conn, Db, transaction, withDb } from "@dxs/db"
import * as FileEdits from "@dxs/db/repositories/FileEdits"
import * as Repo from "@dxs/db/repositories/Projects"
import type { ProjectCreate, ProjectPatch } from "@dxs/domain/contract/Project"
import type { Project, ProjectStatus } from "@dxs/domain/Records"
import { byProject } from "@dxs/pipeline/run/ProjectState"

export { byProject }

import { Context, Effect } from "effect"
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

export const DOCUMENT_DIMENSION = Repo.DOCUMENT_DIMENSION

/** `none` while a project has no output schema; then the mapping's own status (`pending`, `success`, `failed`). */
export const NO_SCHEMA = "none"
const mappingStatus = (hasSchema: boolean, status: string) => (hasSchema ? status : NO_SCHEMA)

export const toProject = (r: Repo.ProjectWithCounts): Project => ({
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
    : Effect.flatMap(Repo.findFolder(db, orgId, folderId), (f) =>
        f
          ? Effect.void
          : Effect.fail(
              BadRequest.of(`folder_id ${folderId} does not name a folder of this organisation`, [
                { path: "folder_id", message: "unknown folder" },
              ]),
            ),
      )

/** A project of the current organisation (live or archived), or NotFound. */
export const findProject = (db: Conn, orgId: string, id: string) =>
  Effect.flatMap(Repo.findProject(db, orgId, id), (row) =>
    row ? Effect.succeed(row) : Effect.fail(NotFound.of("Project", id)),
  )

/**
 * The ids among `ids` of projects of the organisation (live or archived), without repeats, in the given
 * order: what the batch reads (`listForProjects`…) answer for; the others are absent from their result.
 */
export const projectsOfOrganization = (db: Conn, orgId: string, ids: ReadonlyArray<string>) => {
  const unique = [...new Set(ids)]
  return Effect.map(
    Repo.projectIdsOfOrganization(db, orgId, unique),
    (found): ReadonlyArray<string> => unique.filter((id) => found.has(id)),
  )
}

/** The single-project form of a batch read: its entry for the project, or NotFound. */
export const oneProject = <A>(projectId: string, results: ReadonlyMap<string, A>) =>
  results.has(projectId)
    ? Effect.succeed(results.get(projectId)!)
    : Effect.fail(NotFound.of("Project", projectId))

/** NotFound unless `presence` is that of a live (not archived) project of the organisation. */
const livePresence = (presence: Repo.ProjectPresence | undefined, id: string) =>
  presence === undefined
    ? Effect.fail(NotFound.of("Project", id))
    : presence.archived_at === null
      ? Effect.void
      : Effect.fail(NotFound.of("Live project", id))

/** `findProject` for callers that need no counts: one lean read. */
export const checkProject = (db: Conn, orgId: string, id: string) =>
  Effect.flatMap(Repo.findProjectPresence(db, orgId, id), (presence) =>
    presence === undefined ? Effect.fail(NotFound.of("Project", id)) : Effect.void,
  )

/** A live (not archived) project of the current organisation, or NotFound: one lean read. */
export const checkLiveProject = (db: Conn, orgId: string, id: string) =>
  Effect.flatMap(Repo.findProjectPresence(db, orgId, id), (presence) => livePresence(presence, id))

/**
 * Locks the project row (concurrent tag and document changes of one project serialise on it), then
 * NotFound unless it is a live project of the organisation.
 */
export const lockLiveProject = (trx: Conn, orgId: string, id: string, mode: "update" | "share" = "update") =>
  Effect.flatMap(Repo.lockProjectPresence(trx, orgId, id, mode), (presence) => livePresence(presence, id))

/**
 * Inserts a project with the system Document dimension (every project has it: one value per document).
 * The caller validated the input and holds the transaction.
 */
export const insertProject = (trx: Conn, orgId: string, input: ProjectCreate, id?: string) =>
  Effect.gen(function* () {
    yield* folderExists(trx, orgId, input.folder_id)
    return yield* Repo.insertProject(trx, {
      id,
      organization_id: orgId,
      name: input.name.trim(),
      description: input.description ?? "",
      reference_date: input.reference_date === undefined ? todayUtc() : input.reference_date,
      auto_archive_after_days: input.auto_archive_after_days ?? null,
      auto_attach_document_dimension: input.auto_attach_document_dimension ?? false,
      is_pinned: input.is_pinned ?? false,
      folder_id: input.folder_id ?? null,
    })
  })

/** The project status record of each project of the organisation among `ids` (one statement for them all). */
const statusForProjects = (ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    const rows = yield* withDb((db) => Repo.projectStatusRows(db, org.id, [...new Set(ids)]))
    const statuses = new Map<string, ProjectStatus>()
    for (const project of rows) {
      const by = { Pending: 0, Processed: 0, Failed: 0 }
      for (const [status, n] of Object.entries(project.documents))
        if (status in by) by[status as keyof typeof by] = n
      const parsing_state: ProjectStatus["parsing_state"] =
        project.stuck_parses > 0
          ? "stuck"
          : project.active_parses > 0 || by.Pending > 0
            ? "parsing"
            : by.Failed > 0
              ? "failed"
              : "idle"
      statuses.set(project.id, {
        pipeline_running: project.pipeline_running,
        schema_status: mappingStatus(project.has_schema, project.output_mapping_status),
        parsing_state,
        document_count: by.Pending + by.Processed + by.Failed,
        documents_by_status: by,
      })
    }
    return statuses
  })

export class Projects extends Effect.Service<Projects>()("@dxs/services/Projects", {
  effect: Effect.gen(function* () {
    const storage = Context.make(Db, yield* Db).pipe(Context.add(BlobStore, yield* BlobStore))
    const provide = Effect.provide(storage)
    return {
      /** Live projects (or, with `archived`, the projects archived by hand), by name. */
      list: (filter: FolderFilter, options: { readonly archived?: boolean | undefined } = {}) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          const rows = yield* withDb((db) =>
            Repo.listProjects(db, org.id, {
              archived: options.archived === true,
              folderId: filter._tag === "Unfiled" ? null : filter._tag === "In" ? filter.id : undefined,
            }),
          )
          return rows.map(toProject)
        }).pipe(provide),

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
              yield* Repo.setProjectArchived(trx, id, row.archived_at, archived)
              return toProject(yield* findProject(trx, org.id, id))
            }),
          )
        }).pipe(provide),

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
        }).pipe(provide),

      /**
       * Retrieving a project counts as visiting it: the answer carries the visit's time. A writer holding
       * the project (an upload, a launch) is not waited for; its visit is then not marked, and readers at
       * the same moment do not queue on one another's (see `markProjectVisited`).
       */
      get: (id: string) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          return yield* withDb((db) =>
            Effect.gen(function* () {
              const row = yield* findProject(db, org.id, id)
              const visited = yield* Repo.markProjectVisited(db, id)
              return toProject(visited === undefined ? row : { ...row, last_visited_at: visited })
            }),
          )
        }).pipe(provide),

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
              yield* checkProject(trx, org.id, id)
              yield* folderExists(trx, org.id, patch.folder_id)
              const set = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined))
              yield* Repo.updateProject(trx, id, set)
              return toProject(yield* findProject(trx, org.id, id))
            }),
          )
        }).pipe(provide),

      /**
       * Deletes the project with everything in it, its archive project included; then the stored files, page
       * images and file-edit files.
       */
      remove: (id: string) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          const blobs = yield* BlobStore
          const keys = yield* transaction((trx) =>
            Effect.gen(function* () {
              yield* checkProject(trx, org.id, id)
              const rows = yield* Repo.documentVersionsOfProject(trx, id)
              const fileEdit = yield* FileEdits.deleteJob(trx, id)
              yield* Repo.deleteProject(trx, id)
              return [
                ...rows.flatMap(documentVersionFiles),
                ...(fileEdit === undefined ? [] : [fileEdit.template_key, fileEdit.output_key ?? ""]),
              ].filter((key) => key !== "")
            }),
          )
          // After the commit: a crash here leaves an orphan file, never a row pointing at a missing file.
          yield* Effect.forEach(keys, (key) => blobs.remove(key), { concurrency: 4, discard: true })
        }).pipe(provide),

      status: (id: string) =>
        Effect.flatMap(statusForProjects([id]), (statuses) => oneProject(id, statuses)).pipe(provide),

      /** The status records of several projects (those of the organisation), in one read per source. */
      statusForProjects: (ids: ReadonlyArray<string>) => statusForProjects(ids).pipe(provide),
    }
  }),
}) {}
