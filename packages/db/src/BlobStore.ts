import { randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { Readable } from "node:stream"
import { Context, Data, Effect, Layer, Stream } from "effect"

/** Where an S3-compatible bucket is, as BLOB_STORE=s3 and the S3_* settings give it. */
export interface S3BlobStoreOptions {
  readonly bucket: string
  readonly region: string
  /** Another server than AWS S3 (MinIO, Ceph, R2, a test server on loopback); unset: AWS. */
  readonly endpoint?: string | undefined
  /** `<endpoint>/<bucket>/<key>` rather than `<bucket>.<endpoint>/<key>`. */
  readonly forcePathStyle?: boolean | undefined
  /** Put before every key (for example `dxs/`), so that one bucket can hold more than dxs's objects. */
  readonly prefix?: string | undefined
  /** Unset: the SDK's default chain (AWS_ACCESS_KEY_ID…, AWS_PROFILE, instance and container roles). */
  readonly credentials?:
    | { readonly accessKeyId: string; readonly secretAccessKey: string; readonly sessionToken?: string }
    | undefined
  /** Keys per listing request (default and S3's most: 1000; tests use small pages). */
  readonly listPageSize?: number | undefined
  /**
   * The deadline of one call to the store, the SDK's retries included (default 20 s, `S3_TIMEOUT_SECONDS`);
   * a write has one more second per MB it sends. A call past it fails as `StorageUnavailable`.
   */
  readonly timeoutMs?: number | undefined
}

/** The default deadline of one call to an object store. */
export const DEFAULT_S3_TIMEOUT_MS = 20_000

/** The largest object one PutObject or CopyObject request may write (S3's limit). */
export const S3_MAX_SINGLE_PUT_BYTES = 5 * 1024 ** 3

/** A key prefix as stored: without leading slashes, with one trailing slash (or empty). */
export const normalizeS3Prefix = (prefix: string | undefined): string => {
  const trimmed = (prefix ?? "").replace(/^\/+|\/+$/g, "")
  return trimmed === "" ? "" : `${trimmed}/`
}

/** A stored object as a listing shows it. */
export interface BlobEntry {
  readonly key: string
  /** When it was last written. */
  readonly modifiedAt: Date
}

/**
 * What `read`, `stream` and `copy` fail with when there is no object at the key (in the error channel: a
 * caller says what a missing file means where it is read). It carries the file system's `code`, so a
 * defect made of it elsewhere is still recognised by `isBlobNotFound`.
 */
export class BlobNotFound extends Data.TaggedError("BlobNotFound")<{ readonly key: string }> {
  readonly code = "ENOENT"
  override get message() {
    return `no stored object at ${this.key}`
  }
}

/** Whether a defect means that the object is not there (any store). */
export const isBlobNotFound = (e: unknown): boolean =>
  e instanceof BlobNotFound || (e as { code?: unknown } | null)?.code === "ENOENT"

/**
 * A store's call as an effect: a missing object (`BlobNotFound`, thrown by the call) in the error channel,
 * anything else (an outage, a refused request) a defect, as every other call of a store.
 */
export const failingIfMissing = <A>(call: () => Promise<A>): Effect.Effect<A, BlobNotFound> =>
  Effect.tryPromise({ try: call, catch: (e) => e }).pipe(
    Effect.catchAll((e) => (e instanceof BlobNotFound ? Effect.fail(e) : Effect.die(e))),
  )

/**
 * Where original files live: a directory (`fileBlobStore`) or an S3-compatible bucket (`s3BlobStore`).
 * Keys are opaque, relative, slash-separated. Every write is durable and all-or-nothing before its effect
 * succeeds; a missing key is `undefined` from `size` and a `BlobNotFound` failure of `read`, `stream` and
 * `copy`.
 */
export interface BlobStoreShape {
  /** Stores the bytes durably (written, fsynced, renamed into place) before returning. */
  readonly put: (key: string, bytes: Uint8Array) => Effect.Effect<void>
  /** Moves an already written local file into the store (for uploads spooled to disk); it is gone after. */
  readonly putFile: (key: string, file: string) => Effect.Effect<void>
  /** Stores a copy of the object at `from` under `to`, without holding it in memory. */
  readonly copy: (from: string, to: string) => Effect.Effect<void, BlobNotFound>
  readonly read: (key: string) => Effect.Effect<Uint8Array, BlobNotFound>
  /** The object's bytes as they are read (the object is opened, or found missing, before this returns). */
  readonly stream: (key: string) => Effect.Effect<Readable, BlobNotFound>
  readonly size: (key: string) => Effect.Effect<number | undefined>
  /** Removes the object; removing a missing one succeeds. */
  readonly remove: (key: string) => Effect.Effect<void>
  /**
   * Every stored object, including leftovers of writes that never completed, in no particular order
   * (an object store lists them page by page; nothing is held in memory at once).
   */
  readonly list: () => Stream.Stream<BlobEntry>
  /** Whether the store can be reached and used now (readiness); the reason when not. */
  readonly check?: () => Promise<string | undefined>
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
  /** The file system's ENOENT as the store's not-found. */
  const missingAs = (key: string) => (e: unknown) => {
    throw (e as NodeJS.ErrnoException).code === "ENOENT" ? new BlobNotFound({ key }) : e
  }
  return {
    put: (key, bytes) => Effect.promise(() => write(key, (tmp) => fs.writeFile(tmp, bytes))),
    copy: (from, to) =>
      failingIfMissing(() =>
        write(to, (tmp) => fs.copyFile(safeJoin(root, from), tmp).catch(missingAs(from))),
      ),
    putFile: (key, file) =>
      Effect.promise(() =>
        write(key, (tmp) =>
          fs.rename(file, tmp).catch(() => fs.copyFile(file, tmp).then(() => fs.rm(file, { force: true }))),
        ),
      ),
    read: (key) => failingIfMissing(() => fs.readFile(safeJoin(root, key)).catch(missingAs(key))),
    // Opened here, so that a missing file is known before a response starts, not halfway through it.
    stream: (key) =>
      failingIfMissing(() =>
        fs.open(safeJoin(root, key), "r").then((fh) => fh.createReadStream(), missingAs(key)),
      ),
    size: (key) =>
      Effect.promise(() =>
        fs.stat(safeJoin(root, key)).then(
          (s) => s.size,
          () => undefined,
        ),
      ),
    remove: (key) => Effect.promise(() => fs.rm(safeJoin(root, key), { force: true })),
    list: () => Stream.fromAsyncIterable(walk(path.resolve(root), ""), (e) => e).pipe(Stream.orDie),
    check: () =>
      fs.mkdir(root, { recursive: true }).then(
        () =>
          fs.access(root, fs.constants.W_OK).then(
            () => undefined,
            () => `${root} is not writable`,
          ),
        (e: unknown) => `${root} cannot be created: ${e instanceof Error ? e.message : String(e)}`,
      ),
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
