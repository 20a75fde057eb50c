/**
 * An API key checked once is answered from memory afterwards (no read of the database per request), and
 * never after it stopped being valid: a key revoked in this process is refused at once, one revoked or
 * renamed by another process as soon as the database's notification arrives, and a process that lost its
 * listening connection forgets what it knew. Two service layers over one database stand for two API
 * processes; a change made with the triggers off (`session_replication_role = replica`) is one no process
 * hears of, which shows what is answered from memory.
 */
import { Db } from "@dxs/db"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { describe, expect, it } from "@effect/vitest"
import { Context, Duration, Effect, Exit, Layer, Schedule } from "effect"
import { sql } from "kysely"
import { beforeAll } from "vitest"
import { ApiKeys } from "../src/ApiKeys.ts"

let dbUrl: string

beforeAll(async () => {
  dbUrl = await useTestDatabase()
})

/** One API process's keys: its own service (and memory) over its own pool. */
const process = () => Layer.build(ApiKeys.Default.pipe(Layer.provideMerge(Db.layer(dbUrl, 2))))

const check = (keys: ApiKeys, key: string) => Effect.exit(keys.authenticate(key))

/** Checks `key` until it is refused: the change a notification carries arrives in a moment, not at once. */
const refusedSoon = (keys: ApiKeys, key: string) =>
  keys
    .authenticate(key)
    .pipe(
      Effect.flip,
      Effect.retry(Schedule.spaced(Duration.millis(20))),
      Effect.timeoutFail({ duration: Duration.seconds(10), onTimeout: () => "still accepted" as const }),
    )

/** A change no process is told of: the triggers do not fire in a `replica` session. */
const unannounced = (db: Db["Type"], statement: ReturnType<typeof sql>) =>
  Effect.promise(() =>
    db.kysely.connection().execute(async (conn) => {
      await sql`set session_replication_role = replica`.execute(conn)
      try {
        await statement.execute(conn)
      } finally {
        await sql`set session_replication_role = default`.execute(conn)
      }
    }),
  )

/** Until `keys` keeps what it checks (its first check starts listening for changes). */
const keeping = (keys: ApiKeys) =>
  Effect.sync(keys.keepsKeys).pipe(
    Effect.filterOrFail((keeps) => keeps),
    Effect.retry(Schedule.spaced(Duration.millis(20))),
    Effect.timeout(Duration.seconds(10)),
  )

describe("API keys kept in memory", () => {
  it.scopedLive("answers a known key from memory, and forgets it when it is revoked here", () =>
    Effect.gen(function* () {
      const context = yield* process()
      const keys = Context.get(context, ApiKeys)
      const db = Context.get(context, Db)
      const { key } = yield* keys.create("memory one")
      expect((yield* keys.authenticate(key)).name).toBe("memory one")
      yield* keeping(keys)
      // Listening now: the next check is remembered, and then answered without the database.
      expect((yield* keys.authenticate(key)).name).toBe("memory one")
      yield* unannounced(db, sql`update api_keys set revoked_at = now() where key_hash is not null`)
      expect(Exit.isSuccess(yield* check(keys, key))).toBe(true)
      // A revocation made here forgets at once (the database says it was revoked already).
      yield* keys.revoke(key).pipe(Effect.ignore)
      const refused = yield* check(keys, key)
      expect(Exit.isFailure(refused) && String(refused.cause)).toContain("revoked")
    }),
  )

  it.scopedLive("refuses a key another process revoked, and shows an organisation's new name", () =>
    Effect.gen(function* () {
      const one = yield* process()
      const other = yield* process()
      const keysOne = Context.get(one, ApiKeys)
      const keysOther = Context.get(other, ApiKeys)
      const db = Context.get(one, Db)
      const { key } = yield* keysOne.create("memory two")
      yield* keysOne.authenticate(key)
      yield* keeping(keysOne)
      expect((yield* keysOne.authenticate(key)).name).toBe("memory two")
      yield* Effect.promise(() =>
        sql`update organizations set name = 'memory two renamed' where name = 'memory two'`.execute(
          db.kysely,
        ),
      )
      const renamed = yield* keysOne.authenticate(key).pipe(
        Effect.filterOrFail((org) => org.name === "memory two renamed"),
        Effect.retry(Schedule.spaced(Duration.millis(20))),
        Effect.timeout(Duration.seconds(10)),
      )
      expect(renamed.name).toBe("memory two renamed")
      yield* keysOther.revoke(key)
      const refusal = yield* refusedSoon(keysOne, key)
      expect(String(refusal)).toContain("revoked")
    }),
  )

  it.scopedLive("forgets every key when its listening connection is lost", () =>
    Effect.gen(function* () {
      const context = yield* process()
      const keys = Context.get(context, ApiKeys)
      const db = Context.get(context, Db)
      const { key } = yield* keys.create("memory three")
      yield* keys.authenticate(key)
      yield* keeping(keys)
      yield* keys.authenticate(key)
      // The connection is killed and the key revoked where no notification can tell: what was known is
      // no longer trusted once the loss is seen, and the key is read (and refused) again.
      yield* Effect.promise(() =>
        sql`select pg_terminate_backend(pid) from pg_stat_activity
          where application_name = 'dxs listen dxs_api_keys' and datname = current_database()`.execute(
          db.kysely,
        ),
      )
      yield* unannounced(db, sql`update api_keys set revoked_at = now() where revoked_at is null`)
      const refusal = yield* refusedSoon(keys, key)
      expect(String(refusal)).toContain("revoked")
    }),
  )
})
