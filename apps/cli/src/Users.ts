import { randomBytes } from "node:crypto"
import { type Member, Members } from "@dxs/services/Members"
import { Console, Effect, Layer } from "effect"
import { CliError } from "./CliError.ts"
import type { Config } from "./Config.ts"
import { migratedDbLayer } from "./Database.ts"
import { day, table } from "./Keys.ts"

/** Members over an up-to-date schema: works with a running server (shared) or none (started, then stopped). */
const membersLayer = (config: Config) => Members.Default.pipe(Layer.provideMerge(migratedDbLayer(config)))

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const GENERATED_LENGTH = 20
/** Longest first line read from standard input. */
const MAX_LINE = 4096

/** 20 base62 characters (about 119 bits), without modulo bias: bytes of 248 and above are skipped. */
export const generatePassword = (): string => {
  let out = ""
  while (out.length < GENERATED_LENGTH) {
    for (const byte of randomBytes(32)) {
      if (byte < 248 && out.length < GENERATED_LENGTH) out += BASE62[byte % 62]
    }
  }
  return out
}

const failure = (message: string) => new CliError({ message, exitCode: 1 })

/**
 * The first line of standard input, without its line ending; stops reading at the first newline (a pipe
 * that stays open after it does not block). Fails for no line at all or an overlong one.
 */
const readFirstLine = Effect.async<string, CliError>((resume) => {
  const stdin = process.stdin
  let buffered = ""
  let done = false
  const finish = (result: Effect.Effect<string, CliError>) => {
    if (done) return
    done = true
    stdin.off("data", onData)
    stdin.off("end", onEnd)
    stdin.off("error", onError)
    stdin.pause()
    stdin.destroy()
    resume(result)
  }
  const onData = (chunk: string) => {
    buffered += chunk
    const newline = buffered.indexOf("\n")
    if (newline >= 0) finish(Effect.succeed(buffered.slice(0, newline).replace(/\r$/, "")))
    else if (buffered.length > MAX_LINE)
      finish(
        Effect.fail(failure(`the password line on standard input is longer than ${MAX_LINE} characters`)),
      )
  }
  const onEnd = () => finish(Effect.succeed(buffered.replace(/\r$/, "")))
  const onError = (e: Error) => finish(Effect.fail(failure(`cannot read standard input: ${e.message}`)))
  stdin.setEncoding("utf8")
  stdin.on("data", onData)
  stdin.on("end", onEnd)
  stdin.on("error", onError)
  stdin.resume()
  return Effect.sync(() => finish(Effect.fail(failure("interrupted"))))
})

/** The password: stdin's first line when it is not a terminal, otherwise a generated one. */
type Password = { readonly password: string; readonly generated: boolean }

const passwordSource: Effect.Effect<Password, CliError> = Effect.suspend(
  (): Effect.Effect<Password, CliError> =>
    process.stdin.isTTY
      ? Effect.succeed({ password: generatePassword(), generated: true })
      : readFirstLine.pipe(
          Effect.filterOrFail(
            (line) => line !== "",
            () =>
              failure(
                "no password on standard input: pipe it in (first line), " +
                  "or run dxs users create in a terminal to have one generated",
              ),
          ),
          Effect.map((password) => ({ password, generated: false })),
        ),
)

export const createUser = (config: Config, org: string, email: string) =>
  Effect.gen(function* () {
    // Read before the database starts: a missing password fails at once.
    const { password, generated } = yield* passwordSource
    const member = yield* Members.create(org, email, password).pipe(
      Effect.provide(membersLayer(config)),
      Effect.catchTags({
        BadRequest: (e) => Effect.fail(failure(e.detail)),
        Conflict: (e) => Effect.fail(failure(`${e.detail} (see dxs users list)`)),
      }),
    )
    yield* Console.error(`Created member ${member.email} of organisation '${member.organization.name}'.`)
    if (generated) {
      yield* Console.error("Generated password (store it now: it is shown only once; only its hash is kept):")
      yield* Console.log(password)
    }
  })

export const listUsers = (config: Config, org: string | undefined, json: boolean) =>
  Effect.gen(function* () {
    const rows: ReadonlyArray<Member> = yield* Members.list(org)
    if (json) return yield* Console.log(JSON.stringify(rows, null, 2))
    if (rows.length === 0) {
      return yield* Console.error(org === undefined ? "No members." : `No members of organisation '${org}'.`)
    }
    yield* Console.log(
      table([
        ["ID", "ORGANIZATION", "EMAIL", "CREATED"],
        ...rows.map((r) => [r.id, r.organization.name, r.email, day(r.created_at)]),
      ]),
    )
  }).pipe(Effect.provide(membersLayer(config)))
