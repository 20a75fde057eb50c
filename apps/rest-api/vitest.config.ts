import { testConfig } from "../../tooling/vitest/src/config.ts"

// End-to-end tests parse real files and run the pipeline with a worker in the process (its parse threads
// run the compiled build, made once before the tests): generous timeouts.
export default testConfig({
  name: "rest-api",
  database: true,
  timeoutMs: 90_000,
  build: "server",
  // A 70-second storage outage: `pnpm test:outage`, in CI's second pass.
  long: ["test/storageHang.test.ts"],
  // Hostile input (about 7,900 requests, 70 s): logged against PostgreSQL 15, its statements are those of
  // the other files but for single-column updates and one more combination of the grid's filters.
  firstPassOnly: ["test/hostile.test.ts"],
})
