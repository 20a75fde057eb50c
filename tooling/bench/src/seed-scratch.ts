import { makeKysely, migrateToLatest } from "@dxs/db"
import { seedResults } from "./common/results.ts"

const db = makeKysely(process.env.DATABASE_URL!, 6)
await migrateToLatest(db)
const t0 = Date.now()
const r = await seedResults(db, {
  organization: "bench api",
  documents: Number(process.argv[2] ?? 5000),
  agents: 20,
  log: console.log,
})
console.log(`seeded in ${((Date.now() - t0) / 1000).toFixed(1)} s`, r.projectId, r.organizationId)
await db.destroy()
