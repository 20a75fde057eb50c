import * as nodeModule from "node:module"
import { parseCommand } from "./Args.ts"
import type { Config } from "./Config.ts"

// Node 22.1+ keeps V8's compiled code of the modules loaded from here on in the OS temp folder, so later
// starts skip compiling them (Node 20 has no such cache: nothing happens).
;(nodeModule as { readonly enableCompileCache?: () => unknown }).enableCompileCache?.()

/**
 * `dxs`: parses the command line and the environment first (cheap: help and usage errors answer at
 * once), then loads the service code. Exit codes: 0 ok, 1 failed, 2 bad usage or configuration.
 */
const main = async () => {
  const command = parseCommand(process.argv.slice(2))
  if (command._tag === "Help") {
    process.stdout.write(command.text)
    return
  }
  if (command._tag === "UsageError") {
    process.stderr.write(`dxs: ${command.message}\n\n${command.usage}`)
    process.exitCode = 2
    return
  }
  // The configuration's module loads Effect and the storage's settings: not needed for help and usage.
  const { ConfigError, readConfig } = await import("./Config.ts")
  let config: Config
  try {
    config = readConfig()
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e
    process.stderr.write(`dxs: ${e.message}\n`)
    process.exitCode = 2
    return
  }
  const { run } = await import("./Run.ts")
  run(command, config)
}

await main()
