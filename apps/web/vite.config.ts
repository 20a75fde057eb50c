import react from "@vitejs/plugin-react"
import { defineConfig } from "vite"

/**
 * The web application, built to static files (`dist/`) that the all-in-one server serves at APP_URL.
 * `pnpm --filter @dxs/web dev` serves it with hot reload and forwards the API to a running `dxs start`.
 */
export default defineConfig({
  plugins: [react()],
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, assetsInlineLimit: 0 },
  server: {
    proxy: {
      "/api": process.env.DXS_API ?? "http://localhost:8080",
      "/graphql": process.env.DXS_API ?? "http://localhost:8080",
    },
  },
})
