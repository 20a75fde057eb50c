import { testConfig } from "../../tooling/vitest/src/config.ts"

// The CLI tests start real embedded PostgreSQL servers in child processes: slow, so generous timeouts.
export default testConfig({ name: "cli", timeoutMs: 120_000 })
