import { testConfig } from "../../tooling/vitest/src/config.ts"

// The CLI tests run the compiled `dxs` (built once before them, with the web application `./dx start` serves) over real embedded PostgreSQL servers in
// child processes: generous timeouts. The memory test runs the all-in-one process over a test database of
// the shared server. Their time is the child processes', not their imports: each file in its own process.
export default testConfig({ name: "cli", database: true, timeoutMs: 120_000, build: "all", isolate: true })
