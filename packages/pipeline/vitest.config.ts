import { testConfig } from "../../tooling/vitest/src/config.ts"

// Parsing runs real parsers (and OCR) over generated fixtures and the shared corpus: generous timeouts.
export default testConfig({ name: "pipeline", timeoutMs: 120_000 })
