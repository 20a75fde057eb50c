import { testConfig } from "../../tooling/vitest/src/config.ts"

// The end-to-end tests drive a real Chromium against the REST API with the built app on loopback.
export default testConfig({ name: "web", database: true, timeoutMs: 120_000 })
