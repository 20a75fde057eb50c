import { testConfig } from "../../tooling/vitest/src/config.ts"

// End-to-end tests parse real files and run the pipeline with a worker in the process (its parse threads
// run the compiled build, made once before the tests): generous timeouts. One file at a time: with files
// side by side, pipeline.test.ts's TAG dimension case lost a tag value's result in three of four runs
// (never alone); until that is understood, the files do not share the machine.
export default testConfig({
  name: "rest-api",
  database: true,
  timeoutMs: 90_000,
  build: "server",
  workers: 1,
})
