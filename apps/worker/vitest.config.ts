import { testConfig } from "../../tooling/vitest/src/config.ts"

// Process-level tests (worker OS processes, lease expiry, throughput) get generous time on a loaded machine,
// one file at a time: each measures processes that the others would slow down.
export default testConfig({ name: "worker", database: true, timeoutMs: 180_000, build: "server", workers: 1 })
