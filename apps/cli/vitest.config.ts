import { testConfig } from "../../tooling/vitest/src/config.ts"

// The CLI tests start real embedded PostgreSQL servers in child processes: slow, so generous timeouts.
// The memory test runs the all-in-one process over a test database of the shared server.
export default testConfig({ name: "cli", database: true, timeoutMs: 120_000 })
