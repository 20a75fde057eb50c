/** Global setup: the compiled server and CLI (tsc -b), before the package's tests (see CompiledBuild.ts). */
import { buildCompiled } from "./CompiledBuild.ts"

export default async function setup() {
  await buildCompiled(["--no-web"])
}
