import { Db, transaction, withDb } from "@dxs/db"
import * as Repo from "@dxs/db/repositories/Projects"
import type { FolderPatch } from "@dxs/domain/contract/Folder"
import type { Folder } from "@dxs/domain/Records"
import { Context, Effect } from "effect"
import { CurrentOrganization } from "./CurrentOrganization.ts"
import { BadRequest, NotFound } from "./Errors.ts"
import { validName } from "./Inputs.ts"
import { iso } from "./Time.ts"

export type FolderInput = FolderPatch

const toFolder = (r: Repo.FolderRow): Folder => ({
  id: r.id,
  name: r.name,
  parent_id: r.parent_id,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
})

const findFolder = (orgId: string, id: string) =>
  Effect.flatMap(
    withDb((db) => Repo.findFolder(db, orgId, id)),
    (f) => (f ? Effect.succeed(f) : Effect.fail(NotFound.of("Folder", id))),
  )

const validParent = (orgId: string, parentId: string | null | undefined, self?: string) =>
  Effect.gen(function* () {
    if (parentId == null) return
    const parent = yield* findFolder(orgId, parentId).pipe(
      Effect.mapError(() =>
        BadRequest.of(`parent_id ${parentId} does not name a folder of this organisation`, [
          { path: "parent_id", message: "unknown folder" },
        ]),
      ),
    )
    if (self === undefined) return
    // A folder cannot move under itself or one of its descendants.
    const loop = yield* withDb((db) => Repo.isFolderAtOrAbove(db, self, parent.id))
    if (loop)
      return yield* BadRequest.of("a folder cannot be moved into itself or one of its subfolders", [
        { path: "parent_id", message: "would create a cycle" },
      ])
  })

export class Folders extends Effect.Service<Folders>()("@dxs/services/Folders", {
  effect: Effect.gen(function* () {
    const storage = Context.make(Db, yield* Db)
    const provide = Effect.provide(storage)
    return {
      list: () =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          const rows = yield* withDb((db) => Repo.listFolders(db, org.id))
          return rows.map(toFolder)
        }).pipe(provide),
      get: (id: string) =>
        Effect.flatMap(CurrentOrganization, (org) => Effect.map(findFolder(org.id, id), toFolder)).pipe(
          provide,
        ),
      create: (input: FolderInput) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          yield* validName(input.name, "name", true)
          yield* validParent(org.id, input.parent_id)
          const row = yield* withDb((db) =>
            Repo.insertFolder(db, {
              organization_id: org.id,
              name: input.name!.trim(),
              parent_id: input.parent_id ?? null,
            }),
          )
          return toFolder(row)
        }).pipe(provide),
      update: (id: string, input: FolderInput) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          yield* findFolder(org.id, id)
          if (input.name !== undefined) yield* validName(input.name)
          yield* validParent(org.id, input.parent_id, id)
          const row = yield* withDb((db) =>
            Repo.updateFolder(db, id, {
              ...(input.name !== undefined ? { name: input.name.trim() } : {}),
              ...(input.parent_id !== undefined ? { parent_id: input.parent_id } : {}),
            }),
          )
          return toFolder(row)
        }).pipe(provide),
      /** Deleting a folder deletes its subfolders; the projects inside become unfiled, never deleted. */
      remove: (id: string) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          yield* findFolder(org.id, id)
          yield* transaction((trx) => Repo.deleteFolder(trx, id))
        }).pipe(provide),
    }
  }),
}) {}
