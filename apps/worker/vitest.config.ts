import { testConfig } from "../../tooling/vitest/src/config.ts"

// Process-level tests (worker OS processes, lease expiry) get generous time on a loaded machine.
export default testConfig({ name: "worker", database: true, timeoutMs: 180_000 })
