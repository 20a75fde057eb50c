import type { Conn, DimensionRow } from "@dxs/db"
import { Db, transaction, withDb } from "@dxs/db"
import * as DimensionsRepo from "@dxs/db/repositories/Dimensions"
import type { DimensionCreate, DimensionPatch } from "@dxs/domain/contract/Dimension"
import type { DimensionSource, DimensionValueType } from "@dxs/domain/Enums"
import type { Dimension } from "@dxs/domain/Records"
import { Context, Effect } from "effect"
import { CurrentOrganization } from "./CurrentOrganization.ts"
import { Conflict, NotFound } from "./Errors.ts"
import { validName } from "./Inputs.ts"
import {
  byProject,
  checkProject,
  DOCUMENT_DIMENSION,
  oneProject,
  projectsOfOrganization,
} from "./Projects.ts"
import { iso } from "./Time.ts"

export type { DimensionCreate, DimensionPatch }

export const toDimension = (r: DimensionRow): Dimension => ({
  id: r.id,
  project_id: r.project_id,
  name: r.name,
  description: r.description,
  example_values: r.example_values,
  value_type: r.value_type as DimensionValueType,
  source: r.source as DimensionSource,
  auto_attach_to_new_agents: r.auto_attach_to_new_agents,
  created_at: iso(r.created_at),
})

/** DOCUMENT and TAG dimensions are maintained by the system. */
export const isSystemDimension = (source: string): boolean => source === "DOCUMENT" || source === "TAG"

/** A dimension of the project, or NotFound (the project is already known to be the caller's). */
export const findDimension = (db: Conn, projectId: string, id: string) =>
  Effect.flatMap(DimensionsRepo.findDimension(db, projectId, id), (row) =>
    row ? Effect.succeed(row) : Effect.fail(NotFound.of("Dimension", id)),
  )

const collision = (detail: string) => Conflict.of(detail, [{ path: "name", message: detail }])

const nameTaken = (name: string) => collision(`a dimension named "${name}" already exists in this project`)

/**
 * A dimension name must differ (case-insensitively) from every other dimension of the project, from the
 * reserved system name `Document` and from every tag key used by the project's documents.
 */
export const checkDimensionName = (db: Conn, projectId: string, name: string, selfId?: string) =>
  Effect.gen(function* () {
    const lower = name.toLowerCase()
    if (lower === DOCUMENT_DIMENSION.toLowerCase())
      return yield* collision(`"${name}" is the reserved name of the system Document dimension`)
    const other = yield* DimensionsRepo.dimensionNamed(db, projectId, lower, selfId)
    if (other) return yield* nameTaken(other.name)
    const tag = yield* DimensionsRepo.tagKeyNamed(db, projectId, lower)
    if (tag !== undefined)
      return yield* collision(`"${name}" is a document tag key of this project ("${tag}")`)
  })

/** A concurrent write of the same name, caught by the unique index, is a 409 too. */
const orConflict = <A>(name: string, written: Effect.Effect<A | undefined>) =>
  Effect.flatMap(written, (row) => (row === undefined ? Effect.fail(nameTaken(name)) : Effect.succeed(row)))

/** Inserts a CUSTOM dimension after the name checks (409 on a collision), inside the caller's transaction. */
export const insertDimension = (trx: Conn, projectId: string, input: DimensionCreate) =>
  Effect.gen(function* () {
    yield* checkDimensionName(trx, projectId, input.name)
    return yield* orConflict(
      input.name,
      DimensionsRepo.insertCustomDimension(trx, {
        project_id: projectId,
        name: input.name,
        description: input.description ?? "",
        example_values: input.example_values ?? "",
        value_type: input.value_type ?? "string",
        auto_attach_to_new_agents: input.auto_attach_to_new_agents ?? false,
      }),
    )
  })

/** Each project's dimensions, oldest first; projects not of the current organisation are absent. */
const listForProjects = (projectIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    const ids = yield* withDb((db) => projectsOfOrganization(db, org.id, projectIds))
    if (ids.length === 0) return new Map<string, ReadonlyArray<Dimension>>()
    const rows = yield* withDb((db) => DimensionsRepo.dimensionsOfProjects(db, ids))
    return byProject(ids, rows.map(toDimension), (d) => d.project_id)
  })

export class Dimensions extends Effect.Service<Dimensions>()("@dxs/services/Dimensions", {
  effect: Effect.gen(function* () {
    const storage = Context.make(Db, yield* Db)
    const provide = Effect.provide(storage)
    return {
      /** The project's dimensions, oldest first. */
      list: (projectId: string) =>
        Effect.flatMap(listForProjects([projectId]), (lists) => oneProject(projectId, lists)).pipe(provide),

      /** For each of the projects that is the organisation's (the others are absent), its `list`. */
      listForProjects: (projectIds: ReadonlyArray<string>) => listForProjects(projectIds).pipe(provide),

      get: (projectId: string, id: string) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          return yield* withDb((db) =>
            Effect.gen(function* () {
              yield* checkProject(db, org.id, projectId)
              return toDimension(yield* findDimension(db, projectId, id))
            }),
          )
        }).pipe(provide),

      create: (projectId: string, input: DimensionCreate) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          yield* validName(input.name)
          const name = input.name.trim()
          return yield* transaction((trx) =>
            Effect.gen(function* () {
              yield* checkProject(trx, org.id, projectId)
              return toDimension(yield* insertDimension(trx, projectId, { ...input, name }))
            }),
          )
        }).pipe(provide),

      /** Renaming follows the create rules; system-managed dimensions keep their name. */
      update: (projectId: string, id: string, patch: DimensionPatch) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          if (patch.name !== undefined) yield* validName(patch.name)
          const name = patch.name?.trim()
          return yield* transaction((trx) =>
            Effect.gen(function* () {
              yield* checkProject(trx, org.id, projectId)
              const current = yield* findDimension(trx, projectId, id)
              const renamed = name !== undefined && name !== current.name
              if (renamed && isSystemDimension(current.source))
                return yield* Conflict.of(
                  `dimension "${current.name}" is system-managed (source ${current.source}) and cannot be renamed`,
                  [{ path: "name", message: "system-managed dimensions cannot be renamed" }],
                )
              if (renamed) yield* checkDimensionName(trx, projectId, name, id)
              const set = Object.fromEntries(
                Object.entries({
                  name: renamed ? name : undefined,
                  description: patch.description,
                  example_values: patch.example_values,
                  value_type: patch.value_type,
                  auto_attach_to_new_agents: patch.auto_attach_to_new_agents,
                }).filter(([, v]) => v !== undefined),
              )
              if (Object.keys(set).length === 0) return toDimension(current)
              const row = yield* orConflict(
                name ?? current.name,
                DimensionsRepo.updateDimension(trx, id, set),
              )
              return toDimension(row)
            }),
          )
        }).pipe(provide),

      /** Deleting a custom dimension detaches it from every agent. System-managed ones cannot be deleted. */
      remove: (projectId: string, id: string) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          yield* transaction((trx) =>
            Effect.gen(function* () {
              yield* checkProject(trx, org.id, projectId)
              const current = yield* findDimension(trx, projectId, id)
              if (isSystemDimension(current.source))
                return yield* Conflict.of(
                  `dimension "${current.name}" is system-managed (source ${current.source}) and cannot be deleted`,
                )
              yield* DimensionsRepo.deleteDimensions(trx, [id])
            }),
          )
        }).pipe(provide),
    }
  }),
}) {}
