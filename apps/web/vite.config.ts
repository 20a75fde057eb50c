import react from "@vitejs/plugin-react"
import { defaultClientConditions, defineConfig } from "vite"
import { SOURCE_CONDITION } from "../../tooling/vitest/src/conditions.ts"

/**
 * The web application, built to static files (`dist/`) that the all-in-one server serves at APP_URL.
 * `pnpm --filter @dxs/web dev` serves it with hot reload and forwards the API to a running `dxs start`.
 */
export default defineConfig({
  plugins: [react()],
  // @dxs/domain is bundled from its TypeScript sources (no build of it needed first).
  resolve: { conditions: [SOURCE_CONDITION, ...defaultClientConditions] },
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, assetsInlineLimit: 0 },
  server: {
    proxy: {
      "/api": process.env.DXS_API ?? "http://localhost:8080",
      "/graphql": process.env.DXS_API ?? "http://localhost:8080",
    },
  },
})
