/** Which stored keys the database still refers to (for the sweep of orphan files). */
import { type Kysely, sql } from "kysely"
import type { Database } from "./Schema.ts"

/** The folders a key lies in, innermost last: `a/b/c/d` → `a`, `a/b`, `a/b/c`. */
const foldersOf = (key: string) => {
  const parts = key.split("/")
  return parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join("/"))
}

// The same expression as the index `documents_blob_folder`: a key's folder ('' for a key without one).
const folderOf = sql<string>`regexp_replace(blob_key, '/?[^/]*$', '')`

/**
 * The keys among `keys` that no document refers to. A key is referred to when it is a document's
 * `blob_key`, or lies under the folder of one (`…/v1/pages/3.png` beside `…/v1/report.pdf`).
 */
export const unreferencedBlobKeys = async (
  db: Kysely<Database>,
  keys: ReadonlyArray<string>,
): Promise<Array<string>> => {
  if (keys.length === 0) return []
  const folders = [...new Set(keys.flatMap(foldersOf))]
  const exact = await db.selectFrom("documents").select("blob_key").where("blob_key", "in", keys).execute()
  const beside =
    folders.length === 0
      ? []
      : await db
          .selectFrom("documents")
          .select(folderOf.as("folder"))
          .where(folderOf, "in", folders)
          .execute()
  const referenced = new Set(exact.map((r) => r.blob_key))
  const referencedFolders = new Set(beside.map((r) => r.folder))
  return keys.filter((k) => !referenced.has(k) && !foldersOf(k).some((f) => referencedFolders.has(f)))
}
