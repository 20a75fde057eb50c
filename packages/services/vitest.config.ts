import { testConfig } from "../../tooling/vitest/src/config.ts"

export default testConfig({ name: "services", database: true })
