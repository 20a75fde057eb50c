import { createHash } from "node:crypto"
import { Context, Effect, type Exit, Layer, Runtime, type Scope } from "effect"
import { Kysely, PostgresDialect, type Transaction } from "kysely"
import pg from "pg"
import { outageInCause } from "./Outage.ts"
import type { Database } from "./Schema.ts"

export type Conn = Kysely<Database> | Transaction<Database>

const DATE_OID = 1082

/** A pg pool whose `date` columns stay `YYYY-MM-DD` strings (the spec's date format), not local-time Dates. */
export const makePool = (url: string, max = 10): pg.Pool => {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === DATE_OID
          ? (v: string) => v
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  })
  // An idle client killed by the server (restart, dropped database) must not crash the process;
  // the pool replaces it and the next query reports any real problem.
  pool.on("error", () => undefined)
  // So must a client killed while checked out between two statements (a long read waiting for its
  // reader): pg then emits `error` on the client, which the pool only listens to while it is idle; its
  // next statement fails, and that failure is handled where it happens.
  pool.on("connect", (client) => client.on("error", () => undefined))
  return pool
}

/** Distinct statements a connection prepares by name (the rest run unnamed); see `preparingPool`. */
const STATEMENTS_PER_CONNECTION = 500

/** Statements worth preparing: queries and writes (not transaction control, DDL or session settings). */
const PREPARABLE = /^\s*(select|insert|update|delete|with)\b/i

/**
 * Kysely's pool over pg's, whose clients run each query as a named prepared statement (named by a hash of
 * its text): PostgreSQL then parses and plans a statement once per connection instead of on every
 * execution, which is most of the database's work for the small reads of a request. pg prepares a named
 * statement on its first use and keeps it for the connection's life; Kysely runs statements unnamed, so
 * the clients it gets name what they run. Bounded: a connection prepares its first
 * `STATEMENTS_PER_CONNECTION` distinct statements (the frequent ones come early) and runs later ones
 * unnamed; an idle connection is closed by the pool, with what it prepared. (Kept here rather than a
 * driver with a statement cache of its own, such as `postgres`, to stay on pg, which embedded and external
 * PostgreSQL, LISTEN and cursors already use.)
 */
const preparingPool = (pool: pg.Pool) => {
  const clients = new WeakMap<pg.PoolClient, { query: (...args: Array<any>) => any; release: () => void }>()
  // A statement's name by its text, remembered: hashing a page's statement (kilobytes of SQL) took about
  // 1 % of a request's CPU. Bounded like the connections' prepared statements.
  const names = new Map<string, string>()
  const nameOf = (text: string) => {
    let name = names.get(text)
    if (name === undefined) {
      if (names.size >= STATEMENTS_PER_CONNECTION) names.clear()
      name = `dxs_${createHash("sha1").update(text).digest("base64url")}`
      names.set(text, name)
    }
    return name
  }
  return {
    connect: async () => {
      const client = await pool.connect()
      let wrapped = clients.get(client)
      if (wrapped === undefined) {
        const prepared = new Set<string>()
        wrapped = {
          query: (config: unknown, values?: ReadonlyArray<unknown>) => {
            if (typeof config !== "string" || values === undefined || !PREPARABLE.test(config))
              return client.query(config as never, values as never)
            const name = nameOf(config)
            if (!prepared.has(name)) {
              if (prepared.size >= STATEMENTS_PER_CONNECTION)
                return client.query(config, values as Array<unknown>)
              prepared.add(name)
            }
            return client.query({ name, text: config, values: values as Array<unknown> })
          },
          release: () => client.release(),
        }
        clients.set(client, wrapped)
      }
      return wrapped
    },
    end: () => pool.end(),
  }
}

/** The dialect every Kysely of the application uses: pg's pool, with statements prepared per connection. */
export const makeDialect = (url: string, max = 10): PostgresDialect =>
  new PostgresDialect({ pool: preparingPool(makePool(url, max)) as never })

export const makeKysely = (url: string, max = 10): Kysely<Database> =>
  new Kysely<Database>({ dialect: makeDialect(url, max) })

/** The application's database handle. Driver failures are defects: callers see domain errors only. */
export class Db extends Context.Tag("@dxs/db/Db")<
  Db,
  { readonly kysely: Kysely<Database>; readonly url: string }
>() {
  static layer = (url: string, max = 10) =>
    Layer.scoped(
      Db,
      Effect.acquireRelease(
        Effect.sync(() => ({ kysely: makeKysely(url, max), url })),
        ({ kysely }) => Effect.promise(() => kysely.destroy()),
      ),
    )
}

/** Runs a query function against the pool; a driver error becomes a defect. */
export const query = <A>(f: (db: Kysely<Database>) => Promise<A>): Effect.Effect<A, never, Db> =>
  Effect.flatMap(Db, ({ kysely }) => Effect.promise(() => f(kysely)))

/**
 * Runs `body` in one transaction. `body` is an Effect so domain failures roll the transaction back
 * and come out typed; driver errors are defects.
 *
 * The caller waits for the outcome uninterruptibly: interrupting it (a client that disconnects) does not
 * stop a transaction already under way, so the caller must not go on as if it had failed. An interrupted
 * caller sees either the transaction's own failure or, after a commit, only the interruption; clean-ups
 * that must run exactly when nothing was committed use `undoUnlessCommitted`.
 */
export const transaction = <A, E, R>(
  body: (trx: Transaction<Database>) => Effect.Effect<A, E, R>,
): Effect.Effect<A, E, Db | R> => Effect.flatMap(Db, ({ kysely }) => transactionOn(kysely, body))

/** `transaction` on a given Kysely handle (code handed the handle itself, such as a worker's task). */
export const transactionOn = <A, E, R>(
  kysely: Kysely<Database>,
  body: (trx: Transaction<Database>) => Effect.Effect<A, E, R>,
): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.runtime<R>(), (runtime) =>
    Effect.async<A, E>((resume) => {
      let outcome: Exit.Exit<A, E> | undefined
      kysely
        .transaction()
        .execute(async (trx) => {
          outcome = await Runtime.runPromiseExit(runtime)(body(trx))
          if (outcome._tag === "Failure") throw ROLLBACK
        })
        .then(
          () => resume(outcome!),
          (e) => resume(e === ROLLBACK && outcome ? outcome : Effect.die(e)),
        )
    }).pipe(Effect.uninterruptible),
  )

const ROLLBACK = Symbol("rollback")

/**
 * Runs `work` (writes outside the database, such as stored files, then the `transaction` that records
 * them, as its last step) as one unit that an interruption cannot split: an interruption meanwhile
 * waits for the outcome. `undo` (removing the stored files) runs when `work` did not succeed, that is when
 * its transaction did not commit; after a commit nothing is undone, whatever happens to the caller. (An
 * `Effect.onError` around a transaction in an interruptible region cannot tell: an interruption that
 * arrives while the transaction commits surfaces as a failure once the commit is done.)
 *
 * Except after a storage outage: the undo's calls would wait for the store that did not answer all over
 * again (a request that met a hanging store would answer after twice its deadline), so the failure comes
 * at once and what the work may have stored is left to the sweep of orphan files (a write that failed
 * stored nothing, as a rule). It is not removed later in the background either: the key of a new version
 * is the same for the request sent again, whose file a late removal could take from under it.
 */
export const undoUnlessCommitted = <A, E, R, R2>(
  work: Effect.Effect<A, E, R>,
  undo: Effect.Effect<void, never, R2>,
): Effect.Effect<A, E, R | R2> =>
  Effect.uninterruptible(
    Effect.onError(work, (cause) => (outageInCause(cause)?.part === "storage" ? Effect.void : undo)),
  )

/** Runs an Effect that needs the Kysely handle (for helpers shared by transactional and plain code). */
export const withDb = <A, E, R>(
  f: (db: Kysely<Database>) => Effect.Effect<A, E, R>,
): Effect.Effect<A, E, Db | R> => Effect.flatMap(Db, ({ kysely }) => f(kysely))

/**
 * One connection of the pool held for the scope (for work that spans many statements on one session, such
 * as reading through a server-side cursor); given back when the scope closes.
 */
export const scopedConnection = (
  kysely: Kysely<Database>,
): Effect.Effect<Kysely<Database>, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.async<{ conn: Kysely<Database>; release: () => void; finished: Promise<void> }>((resume) => {
        let release: () => void = () => undefined
        const held = new Promise<void>((r) => {
          release = r
        })
        const finished: Promise<void> = kysely.connection().execute(async (conn) => {
          resume(Effect.succeed({ conn, release, finished }))
          await held
        })
        finished.catch((e) => resume(Effect.die(e)))
      }),
      ({ release, finished }) =>
        Effect.promise(() => {
          release()
          return finished.catch(() => undefined)
        }),
    ),
    ({ conn }) => conn,
  )
