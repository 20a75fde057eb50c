import type { Conn } from "@dxs/db"
import { Effect } from "effect"
import { sql } from "kysely"
import { Conflict } from "./Errors.ts"

/**
 * Keeps one system-managed TAG dimension per tag key used by the project's documents, in the same
 * transaction as the tag change: new keys get a dimension, keys no longer used lose theirs.
 * A tag key equal to a custom dimension's name (or `Document`) is refused.
 */
export const syncTagDimensions = (trx: Conn, projectId: string) =>
  Effect.gen(function* () {
    const keys = yield* Effect.promise(() =>
      trx
        .selectFrom("document_tags as t")
        .innerJoin("documents as d", "d.id", "t.document_id")
        .where("d.project_id", "=", projectId)
        .select("t.key")
        .distinct()
        .execute(),
    )
    const dims = yield* Effect.promise(() =>
      trx
        .selectFrom("dimensions")
        .select(["id", "name", "source", "tag_key"])
        .where("project_id", "=", projectId)
        .execute(),
    )
    const used = new Set(keys.map((k) => k.key))
    const tagDims = new Map(dims.filter((d) => d.source === "TAG").map((d) => [d.tag_key ?? d.name, d]))
    for (const key of used) {
      if (tagDims.has(key)) continue
      const clash = dims.find((d) => d.source !== "TAG" && d.name.toLowerCase() === key.toLowerCase())
      if (clash)
        return yield* Conflict.of(
          `tag key "${key}" collides with the ${clash.source === "DOCUMENT" ? "system" : "custom"} dimension "${clash.name}"`,
          [{ path: "tags", message: `key "${key}" is already a dimension name` }],
        )
      yield* Effect.promise(() =>
        trx
          .insertInto("dimensions")
          .values({
            project_id: projectId,
            name: key,
            tag_key: key,
            source: "TAG",
            description: `Values of the document tag "${key}"`,
          })
          .execute(),
      )
    }
    const stale = [...tagDims.entries()].filter(([key]) => !used.has(key)).map(([, d]) => d.id)
    if (stale.length > 0)
      yield* Effect.promise(() => trx.deleteFrom("dimensions").where("id", "in", stale).execute())
  })

/** Current values of a system dimension: document file names (DOCUMENT) or distinct tag values (TAG). */
export const systemDimensionValues = (db: Conn, projectId: string, source: string, tagKey: string | null) =>
  Effect.promise(async () => {
    if (source === "DOCUMENT") {
      const rows = await db
        .selectFrom("documents")
        .select("file_name")
        .where("project_id", "=", projectId)
        .orderBy("uploaded_at")
        .orderBy("id")
        .execute()
      return rows.map((r) => r.file_name)
    }
    if (source === "TAG" && tagKey !== null) {
      const rows = await db
        .selectFrom("document_tags as t")
        .innerJoin("documents as d", "d.id", "t.document_id")
        .where("d.project_id", "=", projectId)
        .where("t.key", "=", tagKey)
        .select("t.value")
        .distinct()
        .orderBy(sql`t.value`)
        .execute()
      return rows.map((r) => r.value)
    }
    return []
  })
