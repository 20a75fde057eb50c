import { type ApiKeyInfo, ApiKeys, KEY_PREFIX } from "@dxs/services/ApiKeys"
import { Console, Effect, Layer } from "effect"
import { CliError } from "./CliError.ts"
import type { Config } from "./Config.ts"
import { migratedDbLayer } from "./Database.ts"

/** ApiKeys over an up-to-date schema: works with a running server (shared) or none (started, then stopped). */
const keysLayer = (config: Config) => ApiKeys.Default.pipe(Layer.provideMerge(migratedDbLayer(config)))

export const createKey = (config: Config, org: string, name: string) =>
  Effect.gen(function* () {
    const keys = yield* ApiKeys
    const created = yield* keys.create(org, name)
    yield* Console.error(
      `Created API key ${created.id} for organisation '${created.organization}'.\n` +
        "Store it now: it is shown only once. Send it in the X-API-Key header.",
    )
    yield* Console.log(created.key)
  }).pipe(Effect.provide(keysLayer(config)))

/** A timestamp as `YYYY-MM-DD HH:MM:SSZ` (or `-`), for tables. */
export const day = (iso: string | null) => (iso === null ? "-" : `${iso.slice(0, 19).replace("T", " ")}Z`)

/** Rows as left-aligned columns, two spaces apart (the first row is the header). */
export const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n")
}

export const listKeys = (config: Config, org: string | undefined, json: boolean) =>
  Effect.gen(function* () {
    const keys = yield* ApiKeys
    const rows: ReadonlyArray<ApiKeyInfo> = yield* keys.list(org)
    if (json) return yield* Console.log(JSON.stringify(rows, null, 2))
    if (rows.length === 0) {
      return yield* Console.error(
        org === undefined ? "No API keys." : `No API keys for organisation '${org}'.`,
      )
    }
    yield* Console.log(
      table([
        ["ID", "ORGANIZATION", "NAME", "PREFIX", "CREATED", "LAST USED", "REVOKED"],
        ...rows.map((r) => [
          r.id,
          r.organization,
          r.name || "-",
          `${r.prefix}…`,
          day(r.created_at),
          day(r.last_used_at),
          day(r.revoked_at),
        ]),
      ]),
    )
  }).pipe(Effect.provide(keysLayer(config)))

export const revokeKey = (config: Config, target: string) =>
  Effect.gen(function* () {
    const keys = yield* ApiKeys
    const shown = target.startsWith(KEY_PREFIX) ? `${target.slice(0, KEY_PREFIX.length + 4)}…` : target
    const id = yield* keys.revoke(target).pipe(
      Effect.catchTag("NotFound", () =>
        Effect.fail(
          new CliError({
            message: `no active API key matches ${shown} (unknown, or already revoked; see dxs keys list)`,
            exitCode: 1,
          }),
        ),
      ),
    )
    yield* Console.log(`Revoked API key ${id}.`)
  }).pipe(Effect.provide(keysLayer(config)))
