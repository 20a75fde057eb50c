import { randomUUID } from "node:crypto"
import { createReadStream } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { Readable } from "node:stream"
import { Context, Effect, Layer, Stream } from "effect"

/** A stored object as a listing shows it. */
export interface BlobEntry {
  readonly key: string
  /** When it was last written. */
  readonly modifiedAt: Date
}

/** Where original files live. Keys are opaque, relative, slash-separated. */
export interface BlobStoreShape {
  /** Stores the bytes durably (written, fsynced, renamed into place) before returning. */
  readonly put: (key: string, bytes: Uint8Array) => Effect.Effect<void>
  /** Moves an already written local file into the store (for uploads spooled to disk). */
  readonly putFile: (key: string, file: string) => Effect.Effect<void>
  readonly read: (key: string) => Effect.Effect<Uint8Array>
  readonly stream: (key: string) => Effect.Effect<Readable>
  readonly size: (key: string) => Effect.Effect<number | undefined>
  readonly remove: (key: string) => Effect.Effect<void>
  /**
   * Every stored object, including leftovers of writes that never completed, in no particular order
   * (an object store lists them page by page; nothing is held in memory at once).
   */
  readonly list: () => Stream.Stream<BlobEntry>
}

export class BlobStore extends Context.Tag("@dxs/db/BlobStore")<BlobStore, BlobStoreShape>() {}

const safeJoin = (root: string, key: string) => {
  const full = path.resolve(root, key)
  if (!full.startsWith(path.resolve(root) + path.sep)) throw new Error(`invalid blob key ${key}`)
  return full
}

/** The files under `dir`, depth first; a directory that vanishes meanwhile is skipped. */
async function* walk(dir: string, prefix: string): AsyncGenerator<BlobEntry> {
  let handle: import("node:fs").Dir
  try {
    handle = await fs.opendir(dir)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return
    throw e
  }
  for await (const entry of handle) {
    const key = prefix === "" ? entry.name : `${prefix}/${entry.name}`
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) yield* walk(full, key)
    else if (entry.isFile()) {
      const stat = await fs.stat(full).catch(() => undefined)
      if (stat) yield { key, modifiedAt: stat.mtime }
    }
  }
}

const UNFINISHED_SUFFIX = ".tmp"
const UNFINISHED_WRITE = /\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.tmp$/

/** Whether `key` is the temporary file of a write (renamed into place when complete). */
export const isUnfinishedWrite = (key: string): boolean => UNFINISHED_WRITE.test(key)

/** A directory on a local or shared file system. */
export const fileBlobStore = (root: string): BlobStoreShape => {
  const write = async (key: string, fill: (tmp: string) => Promise<void>) => {
    const target = safeJoin(root, key)
    await fs.mkdir(path.dirname(target), { recursive: true })
    const tmp = `${target}.${randomUUID()}${UNFINISHED_SUFFIX}`
    try {
      await fill(tmp)
      const fh = await fs.open(tmp, "r")
      await fh.sync()
      await fh.close()
      await fs.rename(tmp, target)
    } catch (e) {
      await fs.rm(tmp, { force: true })
      throw e
    }
  }
  return {
    put: (key, bytes) => Effect.promise(() => write(key, (tmp) => fs.writeFile(tmp, bytes))),
    putFile: (key, file) =>
      Effect.promise(() =>
        write(key, (tmp) =>
          fs.rename(file, tmp).catch(() => fs.copyFile(file, tmp).then(() => fs.rm(file, { force: true }))),
        ),
      ),
    read: (key) => Effect.promise(() => fs.readFile(safeJoin(root, key))),
    stream: (key) => Effect.sync(() => createReadStream(safeJoin(root, key))),
    size: (key) =>
      Effect.promise(() =>
        fs.stat(safeJoin(root, key)).then(
          (s) => s.size,
          () => undefined,
        ),
      ),
    remove: (key) => Effect.promise(() => fs.rm(safeJoin(root, key), { force: true })),
    list: () => Stream.fromAsyncIterable(walk(path.resolve(root), ""), (e) => e).pipe(Stream.orDie),
  }
}

export const fileBlobStoreLayer = (root: string) => Layer.succeed(BlobStore, fileBlobStore(root))

/** Where a document version's original file is stored: `<project>/<document>/v<version>/<safe name>`. */
export const documentBlobKey = (
  projectId: string,
  documentId: string,
  version: number,
  fileName: string,
): string => {
  const cleaned = fileName
    .normalize("NFKD")
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/^[._]+/, "")
  return `${projectId}/${documentId}/v${version}/${(cleaned.length > 100 ? cleaned.slice(-100) : cleaned) || "file"}`
}

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
const DOCUMENT_VERSION_FOLDER = new RegExp(`^${UUID}/${UUID}/v[0-9]+/.`)

/**
 * Whether `key` lies in a document version's folder (`documentBlobKey`'s layout, and what is stored beside
 * it): only such keys are ever considered orphans, so a store pointed at the wrong directory loses nothing
 * that dxs did not write.
 */
export const isDocumentVersionKey = (key: string): boolean => DOCUMENT_VERSION_FOLDER.test(key)
