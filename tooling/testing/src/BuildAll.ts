/**
 * Global setup: the compiled server and CLI and the web application's production build (what the
 * all-in-one process serves), before the package's tests (see CompiledBuild.ts).
 */
import { buildCompiled } from "./CompiledBuild.ts"

export default async function setup() {
  await buildCompiled([])
}
