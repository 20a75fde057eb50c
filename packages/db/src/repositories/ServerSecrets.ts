/**
 * The `server_secrets` table: named secrets every process sharing the database must agree on (the key
 * that signs `file_url` links). A module of its own: the table belongs to the deployment, not to an
 * organisation or any other aggregate. Values arrive and leave as the caller stores them (encrypted).
 */
import { Effect } from "effect"
import type { Conn } from "../Db.ts"

/** Stores `value` under `name` unless a value is already there (the first process to ask wins). */
export const insertSecretIfMissing = (db: Conn, name: string, value: string): Effect.Effect<void> =>
  Effect.promise(() =>
    db
      .insertInto("server_secrets")
      .values({ name, value })
      .onConflict((oc) => oc.column("name").doNothing())
      .execute(),
  ).pipe(Effect.asVoid)

export const findSecret = (db: Conn, name: string): Effect.Effect<string | undefined> =>
  Effect.promise(() =>
    db.selectFrom("server_secrets").select("value").where("name", "=", name).executeTakeFirst(),
  ).pipe(Effect.map((row) => row?.value))

/** Replaces the value of `name` only while it is still `expected` (a writer that got there first wins). */
export const replaceSecret = (db: Conn, name: string, expected: string, value: string): Effect.Effect<void> =>
  Effect.promise(() =>
    db
      .updateTable("server_secrets")
      .set({ value })
      .where("name", "=", name)
      .where("value", "=", expected)
      .execute(),
  ).pipe(Effect.asVoid)
