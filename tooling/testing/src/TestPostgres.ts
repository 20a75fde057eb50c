import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { makeKysely } from "@dxs/db/Db"
import { startEmbedded } from "@dxs/db/Embedded"
import { migrateToLatest } from "@dxs/db/Migrations"
import pg from "pg"

/**
 * Test databases: one PostgreSQL server per test run (embedded in a temp dir, or TEST_DATABASE_URL),
 * one migrated template database, and a fresh clone of it per test file (CREATE DATABASE … TEMPLATE).
 */
export interface TestServer {
  readonly templateUrl: string
  readonly stop: () => Promise<void>
}

const withDatabase = (url: string, name: string) => {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}

const admin = async <A>(url: string, f: (c: pg.Client) => Promise<A>) => {
  const client = new pg.Client({ connectionString: withDatabase(url, "postgres") })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

export const startTestServer = async (): Promise<TestServer> => {
  const external = process.env.TEST_DATABASE_URL
  let serverUrl: string
  let stopServer = async () => {}
  if (external) {
    serverUrl = external
  } else {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "dxs-test-"))
    await fs.chmod(dir, 0o755)
    const server = await startEmbedded({ dataDir: dir, ephemeral: true })
    serverUrl = server.url
    stopServer = async () => {
      await server.stop()
      await fs.rm(dir, { recursive: true, force: true })
    }
  }
  const run = randomBytes(5).toString("hex")
  const template = `dxs_tpl_${run}`
  await admin(serverUrl, (c) => c.query(`create database ${template}`))
  const templateUrl = withDatabase(serverUrl, template)
  const db = makeKysely(templateUrl, 1)
  await migrateToLatest(db)
  await db.destroy()
  return {
    templateUrl,
    stop: async () => {
      // The files' databases too: a file's own drop may not have run (a file stopped by a failure), and
      // on an external server they would stay behind run after run.
      await admin(serverUrl, async (c) => {
        const { rows } = await c.query<{ datname: string }>(
          "select datname from pg_database where datname like $1",
          [`${cloneOf(template)}%`],
        )
        for (const { datname } of rows) await c.query(`drop database if exists ${datname} with (force)`)
        await c.query(`drop database if exists ${template} with (force)`)
      }).catch(() => undefined)
      await stopServer()
    },
  }
}

/** The prefix of the names of the databases cloned from `template` (`dxs_t_<run>_`). */
const cloneOf = (template: string) => `dxs_t_${template.replace(/^dxs_tpl_/, "")}_`

/** A fresh, migrated database cloned from the run's template. */
export const createTestDatabase = async (
  templateUrl: string,
): Promise<{ url: string; drop: () => Promise<void> }> => {
  const template = new URL(templateUrl).pathname.slice(1)
  const name = `${cloneOf(template)}${randomBytes(6).toString("hex")}`
  await admin(templateUrl, (c) => c.query(`create database ${name} template ${template}`))
  return {
    url: withDatabase(templateUrl, name),
    drop: () =>
      admin(templateUrl, (c) => c.query(`drop database if exists ${name} with (force)`)).then(
        () => undefined,
      ),
  }
}
