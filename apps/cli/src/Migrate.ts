import { Console, Effect, Layer } from "effect"
import type { Config } from "./Config.ts"
import { DatabaseServer, dbLayer, migrate } from "./Database.ts"

/** `dxs migrate`: applies pending migrations and prints their names. */
export const migrateCommand = (config: Config) =>
  Effect.gen(function* () {
    const server = yield* DatabaseServer
    const applied = yield* migrate
    if (applied.length === 0) {
      yield* Console.log(`The database schema is up to date (${server.description}); nothing applied.`)
    } else {
      yield* Console.log(`Applied ${applied.length} migration(s) to ${server.description}:`)
      for (const name of applied) yield* Console.log(`  ${name}`)
    }
  }).pipe(Effect.provide(Layer.fresh(dbLayer(config))))
