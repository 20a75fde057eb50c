import type { Conn } from "@dxs/db"
import * as DimensionsRepo from "@dxs/db/repositories/Dimensions"
import { Effect } from "effect"
import { Conflict } from "./Errors.ts"

/**
 * Keeps one system-managed TAG dimension per tag key used by the project's documents, in the same
 * transaction as the tag change: new keys get a dimension, keys no longer used lose theirs.
 * A tag key equal to a custom dimension's name (or `Document`) is refused.
 */
export const syncTagDimensions = (trx: Conn, projectId: string) =>
  Effect.gen(function* () {
    const keys = yield* DimensionsRepo.tagKeysOfProject(trx, projectId)
    const dims = yield* DimensionsRepo.dimensionsOfProject(trx, projectId)
    const used = new Set(keys)
    const tagDims = new Map(dims.filter((d) => d.source === "TAG").map((d) => [d.tag_key ?? d.name, d]))
    for (const key of used) {
      if (tagDims.has(key)) continue
      const clash = dims.find((d) => d.source !== "TAG" && d.name.toLowerCase() === key.toLowerCase())
      if (clash)
        return yield* Conflict.of(
          `tag key "${key}" collides with the ${clash.source === "DOCUMENT" ? "system" : "custom"} dimension "${clash.name}"`,
          [{ path: "tags", message: `key "${key}" is already a dimension name` }],
        )
      yield* DimensionsRepo.insertTagDimension(trx, projectId, key)
    }
    const stale = [...tagDims.entries()].filter(([key]) => !used.has(key)).map(([, d]) => d.id)
    yield* DimensionsRepo.deleteDimensions(trx, stale)
  })
