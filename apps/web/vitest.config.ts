import { testConfig } from "../../tooling/vitest/src/config.ts"

// The end-to-end tests drive a real Chromium against the compiled all-in-one process serving the web
// application's production build (both built once before them). Their time is the browser's and the
// server's, not their imports: each file in its own process, as vitest isolates by default.
export default testConfig({ name: "web", database: true, timeoutMs: 120_000, build: "all", isolate: true })
