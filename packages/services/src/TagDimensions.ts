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

/**
 * Current values of system dimensions (by dimension id): their project's document file names (DOCUMENT)
 * or the distinct values of their tag (TAG), one read per source however many
 * projects and dimensions.
 */
export const systemDimensionValuesOf = (
  db: Conn,
  dimensions: ReadonlyArray<{
    readonly dimension_id: string
    readonly project_id: string
    readonly source: string
    readonly tag_key: string | null
  }>,
) =>
  Effect.promise(async () => {
    const unique = <A>(xs: ReadonlyArray<A>) => [...new Set(xs)]
    const documentProjects = unique(
      dimensions.filter((d) => d.source === "DOCUMENT").map((d) => d.project_id),
    )
    const tagged = dimensions.filter((d) => d.source === "TAG" && d.tag_key !== null)
    const files =
      documentProjects.length === 0
        ? []
        : await db
            .selectFrom("documents")
            .select(["project_id", "file_name"])
            .where("project_id", "in", documentProjects)
            .orderBy("uploaded_at")
            .orderBy("id")
            .execute()
    const tags =
      tagged.length === 0
        ? []
        : await db
            .selectFrom("document_tags as t")
            .innerJoin("documents as d", "d.id", "t.document_id")
            .where("d.project_id", "in", unique(tagged.map((d) => d.project_id)))
            .where("t.key", "in", unique(tagged.map((d) => d.tag_key!)))
            .select(["d.project_id", "t.key", "t.value"])
            .distinct()
            .orderBy(sql`t.value`)
            .execute()
    return new Map<string, ReadonlyArray<string>>(
      dimensions.map((d) => [
        d.dimension_id,
        d.source === "DOCUMENT"
          ? files.filter((f) => f.project_id === d.project_id).map((f) => f.file_name)
          : d.source === "TAG" && d.tag_key !== null
            ? tags.filter((t) => t.project_id === d.project_id && t.key === d.tag_key).map((t) => t.value)
            : [],
      ]),
    )
  })
