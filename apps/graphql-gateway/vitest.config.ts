import { createRequire } from "node:module"
import { mergeConfig } from "vitest/config"
import { testConfig } from "../../tooling/vitest/src/config.ts"

// graphql ships CommonJS and ESM builds; graphql-yoga (loaded by Node) uses the CommonJS one, so the
// tests' imports must resolve to the same build or its type checks see two different modules.
const graphqlMain = createRequire(import.meta.url).resolve("graphql")

export default mergeConfig(
  testConfig({ name: "graphql-gateway", database: true, timeoutMs: 90_000, build: "server" }),
  {
    resolve: { alias: [{ find: /^graphql$/, replacement: graphqlMain }] },
  },
)
