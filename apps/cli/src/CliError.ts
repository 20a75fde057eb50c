import { Data } from "effect"

/** A failure the command reports as one message (no stack trace) and exits with `exitCode`. */
export class CliError extends Data.TaggedError("CliError")<{
  readonly message: string
  readonly exitCode: number
}> {}
