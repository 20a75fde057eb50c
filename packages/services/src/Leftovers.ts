/**
 * What interrupted work leaves behind, and its removal: files in the blob store that no document refers
 * to (a process killed between storing a file and committing its row, or while writing one), and
 * spool folders of uploads whose process died while it read them.
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import {
  type BlobStoreShape,
  type Database,
  isDocumentVersionKey,
  isUnfinishedWrite,
  unreferencedBlobKeys,
} from "@dxs/db"
import { Chunk, Context, Effect, Stream } from "effect"
import type { Kysely } from "kysely"

/** A stored file younger than this is never an orphan: its transaction may still be about to commit. */
export const ORPHAN_MIN_AGE_MS = 60 * 60 * 1000
/** A spool folder of a living process is removed only when it is older than this. */
export const SPOOL_MAX_AGE_MS = 24 * 60 * 60 * 1000

/** Where uploads are spooled while their request is read: one folder per request, `<pid>-<random>`. */
export class SpoolSettings extends Context.Reference<SpoolSettings>()("@dxs/services/SpoolSettings", {
  defaultValue: (): { readonly root: string } => ({ root: defaultSpoolRoot() }),
}) {}

/** `<temp dir>/dxs-spool-<uid>`: one per user, so processes of another user never share (or lock us out of) it. */
export const defaultSpoolRoot = () => path.join(os.tmpdir(), `dxs-spool-${process.getuid?.() ?? "user"}`)

/**
 * A new spool folder of this process under `root` (private to its user), removed with everything in it
 * when the scope closes: the request was answered, failed, or its client went away.
 */
export const spoolFolder = (root: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      await fs.mkdir(root, { recursive: true, mode: 0o700 })
      const dir = path.join(root, `${process.pid}-${randomBytes(8).toString("hex")}`)
      await fs.mkdir(dir, { mode: 0o700 })
      return dir
    }),
    // Should removal fail, the sweep of leftovers removes the folder within a day.
    (dir) =>
      Effect.promise(() =>
        fs.rm(dir, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined),
      ),
  )

const processAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    // EPERM: it exists, under another user.
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

export interface SpoolSweep {
  readonly root: string
  /** Folders last changed before this are removed even when their process lives (default: a day ago). */
  readonly olderThan?: Date | undefined
  readonly isAlive?: ((pid: number) => boolean) | undefined
}

/** Removes spool folders whose process no longer exists, or that are older than a day. Returns how many. */
export const sweepSpool = async (options: SpoolSweep): Promise<number> => {
  const olderThan = options.olderThan ?? new Date(Date.now() - SPOOL_MAX_AGE_MS)
  const isAlive = options.isAlive ?? processAlive
  const entries = await fs.readdir(options.root, { withFileTypes: true }).catch((e) => {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return []
    throw e
  })
  let removed = 0
  for (const entry of entries) {
    const full = path.join(options.root, entry.name)
    const stat = await fs.lstat(full).catch(() => undefined)
    if (!stat) continue
    const pid = /^(\d+)-/.exec(entry.name)?.[1]
    const dead = pid !== undefined && Number(pid) !== process.pid && !isAlive(Number(pid))
    if (dead || stat.mtime < olderThan) {
      // One that cannot be removed (not ours to remove) does not stop the others.
      const gone = await fs.rm(full, { recursive: true, force: true }).then(
        () => true,
        () => false,
      )
      if (gone) removed++
    }
  }
  return removed
}

export interface OrphanSweep {
  /** Files last written before this may be removed (default: an hour ago). */
  readonly olderThan?: Date | undefined
}

const BATCH = 500

/**
 * Removes files of the blob store, written before `olderThan`, that no document refers to: not a
 * document's `blob_key` nor in the folder of one (page images beside the original), and unfinished
 * writes. Only keys of dxs's own layout are considered. Returns how many were removed.
 */
export const sweepOrphanBlobs = (db: Kysely<Database>, blobs: BlobStoreShape, options: OrphanSweep = {}) => {
  const olderThan = options.olderThan ?? new Date(Date.now() - ORPHAN_MIN_AGE_MS)
  return blobs.list().pipe(
    Stream.filter((e) => e.modifiedAt < olderThan && isDocumentVersionKey(e.key)),
    Stream.map((e) => e.key),
    Stream.grouped(BATCH),
    Stream.mapEffect((chunk) =>
      Effect.gen(function* () {
        const keys = Chunk.toReadonlyArray(chunk)
        const unfinished = keys.filter(isUnfinishedWrite)
        const rest = keys.filter((k) => !isUnfinishedWrite(k))
        const orphans = [...unfinished, ...(yield* Effect.promise(() => unreferencedBlobKeys(db, rest)))]
        yield* Effect.forEach(orphans, (k) => blobs.remove(k), { concurrency: 4, discard: true })
        return orphans.length
      }),
    ),
    Stream.runFold(0, (n, removed) => n + removed),
  )
}

/** What the leftovers sweep needs: the blob store, and the spool root of uploads on this machine. */
export interface LeftoverStores {
  readonly blobs: BlobStoreShape
  readonly spoolRoot?: string | undefined
}

/** Orphan files of the blob store and dead spool folders, removed. Returns how many. */
export const sweepLeftovers = (db: Kysely<Database>, stores: LeftoverStores) =>
  Effect.zipWith(
    sweepOrphanBlobs(db, stores.blobs),
    Effect.promise(() => sweepSpool({ root: stores.spoolRoot ?? defaultSpoolRoot() })),
    (orphans, spool) => orphans + spool,
  )
