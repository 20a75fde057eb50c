import { parseCommand } from "./Args.ts"
import { type Config, ConfigError, readConfig } from "./Config.ts"

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
