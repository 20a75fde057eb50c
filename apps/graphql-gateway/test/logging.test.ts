/**
 * What the gateway logs about errors: a client's mistakes (no key, another organisation's project, a bad
 * argument, a refused query) are logged at debug level in one line, so no client can flood the log with
 * stacks; an unexpected failure is still an error with its stack.
 */
import { randomUUID } from "node:crypto"
import { GraphQLError } from "graphql"
import { sql } from "kysely"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CLIENT_ERROR_CODES, gatewayLogger } from "../src/Logging.ts"
import { recordingLogger } from "./live.ts"
import { codesOf, type Gateway, graphqlOn, startGateway, withDb } from "./support.ts"

let gql: Gateway
let key: string
const log = recordingLogger()
const graphql = graphqlOn(() => gql)

beforeAll(async () => {
  gql = await startGateway({ logging: log.logger })
  key = await gql.api.newKey("acme")
})

afterAll(async () => {
  await gql?.close()
})

const deep = (n: number): string => (n === 0 ? "id" : `agents { ${deep(n - 1)} }`)

describe("logging of errors", () => {
  it("logs client errors at debug level, one line each without a stack", async () => {
    log.lines.length = 0
    const replies = [
      await graphql(undefined, "{ projects { id } }"),
      await graphql(key, "query ($id: ID!) { project(id: $id) { id } }", { id: randomUUID() }),
      await graphql(key, "query ($id: ID!) { project(id: $id) { id } }", { id: "not-a-uuid" }),
      await graphql(key, 'mutation { createProject(input: { name: "" }) { id } }'),
    ]
    expect(replies.map(codesOf)).toEqual([
      ["UNAUTHENTICATED"],
      ["NOT_FOUND"],
      ["BAD_USER_INPUT"],
      ["BAD_USER_INPUT"],
    ])
    expect(codesOf(await graphql(key, `{ ${deep(11)} }`))).toContain("DEPTH_LIMIT_EXCEEDED")
    expect(log.errors()).toEqual([])
    const debug = log.lines.filter((l) => l.level === "debug").map((l) => l.args.join(" "))
    for (const code of ["NOT_FOUND", "BAD_USER_INPUT"])
      expect(
        debug.some((line) => line.includes(code)),
        `${code} in ${JSON.stringify(debug)}`,
      ).toBe(true)
    for (const line of debug) {
      expect(line).not.toMatch(/\n\s+at /)
      expect(line).not.toContain("[object Object]")
    }
  })

  it("still logs an unexpected failure as an error, with its stack", async () => {
    log.lines.length = 0
    // A table the query reads is missing: a fault of the deployment, not of the client.
    await withDb(gql.api, (db) => sql`alter table folders rename to folders_moved`.execute(db))
    try {
      const r = await graphql(key, "{ folders { id } }")
      expect(r.errors?.[0]?.message).toBe("Unexpected error.")
    } finally {
      await withDb(gql.api, (db) => sql`alter table folders_moved rename to folders`.execute(db))
    }
    const errors = log.errors()
    expect(errors).toHaveLength(1)
    const logged = errors[0]!.args[0]
    expect(logged).toBeInstanceOf(Error)
    expect((logged as Error).stack).toMatch(/\n\s+at /)
  })
})

describe("the gateway's logger", () => {
  it("writes every client error code at debug level, whatever wraps it, and the rest as errors", () => {
    const recorded = recordingLogger()
    const logger = gatewayLogger(recorded.logger)
    const coded = (code: string) =>
      // As graphql-js locates a resolver's error: the same message, the original inside.
      new GraphQLError(`a ${code}`, {
        originalError: new GraphQLError(`a ${code}`, { extensions: { code } }),
      })
    for (const code of CLIENT_ERROR_CODES) logger.error(coded(code))
    logger.error(coded("INTERNAL_SERVER_ERROR"))
    logger.error(new Error("a fault"))
    // GraphQL refusing the request itself (a variable of the wrong type) carries a 4xx status, no code.
    logger.error(
      new GraphQLError("a bad variable", {
        originalError: new GraphQLError("not a value of the enum"),
        extensions: { http: { status: 400 } },
      }),
    )
    // A client gone before its answer, as graphql-js locates the abort.
    logger.error(new GraphQLError("aborted", { originalError: new DOMException("aborted", "AbortError") }))
    logger.info("kept")
    expect(
      recorded.lines.map((l) => [l.level, typeof l.args[0] === "string" ? l.args[0] : "an error"]),
    ).toEqual([
      ...[...CLIENT_ERROR_CODES].map((code) => ["debug", `${code}: a ${code}`]),
      ["error", "an error"],
      ["error", "an error"],
      ["debug", "BAD_REQUEST: a bad variable"],
      ["debug", "Request aborted: the client went away"],
      ["info", "kept"],
    ])
    expect([...CLIENT_ERROR_CODES].sort()).toEqual(
      [
        "BAD_USER_INPUT",
        "COMPLEXITY_LIMIT_EXCEEDED",
        "CONFLICT",
        "DEPTH_LIMIT_EXCEEDED",
        "FORBIDDEN",
        "NOT_FOUND",
        "RATE_LIMITED",
        "UNAUTHENTICATED",
      ].sort(),
    )
  })
})
