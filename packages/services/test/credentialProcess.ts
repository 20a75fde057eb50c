/**
 * One API process of the credential tests: `service` built with its own memory of credentials (believing a
 * key or session `ttlMs`) over its own pool of `dbUrl`, as each process of a deployment has. Two of them
 * over one database stand for two API processes.
 */
import { Db } from "@dxs/db"
import { Context, Effect, Layer } from "effect"
import { CredentialMemory } from "../src/CredentialMemory.ts"

export const credentialProcess = <I, S>(
  tag: Context.Tag<I, S>,
  service: Layer.Layer<I, never, Db>,
  dbUrl: string,
  ttlMs: number,
) =>
  Effect.map(
    Layer.build(
      service.pipe(
        Layer.provideMerge(Db.layer(dbUrl, 2)),
        Layer.provide(Layer.succeed(CredentialMemory, { ttlMs })),
      ),
    ),
    (context) => ({ service: Context.get(context, tag), db: Context.get(context, Db) }),
  )
