/** Global setup: the compiled server and CLI (tsc -b), before the package's tests (see CompiledBuild.ts). */
import { buildCompiled } from "./CompiledBuild.ts"

export default async function setup() {
  await buildCompiled(["--no-web"])
  // The parse threads of the servers these tests start in-process run the build too (see Runner.ts).
  process.env.DXS_COMPILED_PARSE_THREADS = "1"
}
