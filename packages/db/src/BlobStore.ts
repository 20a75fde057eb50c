import { randomUUID } from "node:crypto"
import { createReadStream } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { Readable } from "node:stream"
import { Context, Effect, Layer } from "effect"

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
}

export class BlobStore extends Context.Tag("@dxs/db/BlobStore")<BlobStore, BlobStoreShape>() {}

const safeJoin = (root: string, key: string) => {
  const full = path.resolve(root, key)
  if (!full.startsWith(path.resolve(root) + path.sep)) throw new Error(`invalid blob key ${key}`)
  return full
}

/** A directory on a local or shared file system. */
export const fileBlobStore = (root: string): BlobStoreShape => {
  const write = async (key: string, fill: (tmp: string) => Promise<void>) => {
    const target = safeJoin(root, key)
    await fs.mkdir(path.dirname(target), { recursive: true })
    const tmp = `${target}.${randomUUID()}.tmp`
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
