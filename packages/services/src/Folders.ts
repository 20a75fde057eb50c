import { query, transaction } from "@dxs/db"
import type { FolderPatch } from "@dxs/domain/contract/Folder"
import type { Folder } from "@dxs/domain/Records"
import { Effect } from "effect"
import { sql } from "kysely"
import { CurrentOrganization } from "./CurrentOrganization.ts"
import { BadRequest, NotFound } from "./Errors.ts"
import { validName } from "./Inputs.ts"
import { iso } from "./Time.ts"

export type FolderInput = FolderPatch

const toFolder = (r: {
  id: string
  name: string
  parent_id: string | null
  created_at: Date
  updated_at: Date
}): Folder => ({
  id: r.id,
  name: r.name,
  parent_id: r.parent_id,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
})

const findFolder = (orgId: string, id: string) =>
  Effect.flatMap(
    query((db) =>
      db
        .selectFrom("folders")
        .selectAll()
        .where("id", "=", id)
        .where("organization_id", "=", orgId)
        .executeTakeFirst(),
    ),
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
    const loop = yield* query((db) =>
      sql<{ id: string }>`
        with recursive up(id, parent_id) as (
          select id, parent_id from folders where id = ${parent.id}
          union all select f.id, f.parent_id from folders f join up on f.id = up.parent_id
        ) select id from up where id = ${self}`.execute(db),
    )
    if (loop.rows.length > 0)
      return yield* BadRequest.of("a folder cannot be moved into itself or one of its subfolders", [
        { path: "parent_id", message: "would create a cycle" },
      ])
  })

export class Folders extends Effect.Service<Folders>()("@dxs/services/Folders", {
  succeed: {
    list: () =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        const rows = yield* query((db) =>
          db
            .selectFrom("folders")
            .selectAll()
            .where("organization_id", "=", org.id)
            .orderBy(sql`lower(name)`)
            .orderBy("id")
            .execute(),
        )
        return rows.map(toFolder)
      }),
    get: (id: string) =>
      Effect.flatMap(CurrentOrganization, (org) => Effect.map(findFolder(org.id, id), toFolder)),
    create: (input: FolderInput) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        yield* validName(input.name, "name", true)
        yield* validParent(org.id, input.parent_id)
        const row = yield* query((db) =>
          db
            .insertInto("folders")
            .values({ organization_id: org.id, name: input.name!.trim(), parent_id: input.parent_id ?? null })
            .returningAll()
            .executeTakeFirstOrThrow(),
        )
        return toFolder(row)
      }),
    update: (id: string, input: FolderInput) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        yield* findFolder(org.id, id)
        if (input.name !== undefined) yield* validName(input.name)
        yield* validParent(org.id, input.parent_id, id)
        const row = yield* query((db) =>
          db
            .updateTable("folders")
            .set({
              ...(input.name !== undefined ? { name: input.name.trim() } : {}),
              ...(input.parent_id !== undefined ? { parent_id: input.parent_id } : {}),
              updated_at: sql`now()`,
            })
            .where("id", "=", id)
            .returningAll()
            .executeTakeFirstOrThrow(),
        )
        return toFolder(row)
      }),
    /** Deleting a folder deletes its subfolders; the projects inside become unfiled, never deleted. */
    remove: (id: string) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        yield* findFolder(org.id, id)
        yield* transaction((trx) =>
          Effect.promise(() => trx.deleteFrom("folders").where("id", "=", id).execute()),
        )
      }),
  },
}) {}
