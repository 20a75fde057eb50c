import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    globalSetup: ["../../packages/db/src/TestGlobalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
})
