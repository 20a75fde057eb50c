/**
 * Requests generated from the API's own OpenAPI description, over real HTTP and real PostgreSQL, aimed at
 * real fixtures (see fixtures.ts), every answer judged by the description's own responses (judge.ts):
 *
 * - every value the description allows for a query parameter (each end of a number's range, the smallest
 *   doubles and denormals inside a range that includes 0, each member of an enum, strings of the smallest
 *   and largest described length) is answered as documented and never refused for that parameter; each value
 *   just outside what it allows is a 400 naming the parameter;
 * - every operation that needs credentials answers 401 without them, whatever else is wrong with the
 *   request (a NUL in the query, an unknown body member);
 * - every method a described path does not have is 405 with `Allow` listing exactly the described methods.
 *
 * Deterministic (no randomness) and bounded (a few hundred requests).
 */
import { randomUUID } from "node:crypto"
import { createFixtures, type Fixtures } from "@dxs/testing/HostileFixtures"
import { expectNoFailures } from "@dxs/testing/HostileReport"
import { type RawOutcome, rawClient } from "@dxs/testing/RawClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { compileDescription, type Description, HTTP_METHODS, operationsOf } from "./description.ts"
import { startTestApi, type TestApi } from "./harness.ts"
import { type Case, type DescribedOperation, runCases } from "./judge.ts"

const CONCURRENCY = 4

let api: TestApi
let description: Description
let raw: ReturnType<typeof rawClient>
let fx: Fixtures & { readonly key: string }

beforeAll(async () => {
  api = await startTestApi({ worker: {} })
  const key = await api.newKey(`described-${randomUUID()}`)
  const client = api.client(key)
  // The webhook fixture needs a public-looking URL only: nothing is delivered in this suite.
  fx = { ...(await createFixtures(client, "https://93.184.216.34/hook")), key }
  description = compileDescription((await client.get("/schema/?format=json")).body)
  raw = rawClient(api.origin, { sockets: CONCURRENCY, timeoutMs: 10_000 })
}, 120_000)

afterAll(() => raw?.close())

const operations = (): Array<DescribedOperation> =>
  operationsOf(description.doc).map(({ method, path, op }) => ({
    method: method.toUpperCase(),
    path,
    op,
    id: `${method.toUpperCase()} ${path}`,
    operationId: op.operationId as string,
  }))

/** Operations this suite leaves to others: sign-in (throttled), key management (by session), signed links. */
const OPEN = new Set(["meta.schema", "auth.signIn", "auth.signOut", "files.download"])

/** The fixture a path parameter names. */
const pathValue = (o: DescribedOperation, name: string): string => {
  if (name === "id") {
    if (o.path.startsWith("/api/v1/folders/")) return fx.folder
    if (o.path.startsWith("/api/v1/webhooks/")) return fx.webhook
    if (o.path.startsWith("/api/v1/keys/")) return randomUUID()
    return fx.project
  }
  const byName: Record<string, string> = {
    project_id: fx.project,
    agent_id: fx.agent,
    dimension_id: fx.dimension,
    document_id: fx.document,
    page_number: "1",
    run_number: "1",
    resolution_result_id: fx.result,
    extraction_id: fx.extraction,
  }
  return byName[name] ?? randomUUID()
}

const pathOf = (o: DescribedOperation) =>
  o.path.replace(/\{(\w+)\}/g, (_, name: string) => pathValue(o, name))

const resolve = (schema: any): any =>
  schema?.$ref === undefined
    ? schema
    : resolve(description.doc.components.schemas[schema.$ref.split("/").pop()])

/** Values a parameter's schema allows, and values just outside it, each with a label. */
const valuesOf = (schema: any): { valid: Array<string>; invalid: Array<string> } => {
  const s = resolve(schema) ?? {}
  const valid: Array<string> = []
  const invalid: Array<string> = []
  if (Array.isArray(s.enum)) {
    valid.push(...s.enum.map(String))
    invalid.push(`${s.enum[0]}-not`)
  } else if (s.type === "integer") {
    if (s.minimum !== undefined) valid.push(String(s.minimum))
    if (s.maximum !== undefined) valid.push(String(s.maximum))
    if (s.minimum !== undefined) invalid.push(String(s.minimum - 1))
    if (s.maximum !== undefined) invalid.push(String(s.maximum + 1))
    invalid.push("1.5")
  } else if (s.type === "number") {
    if (s.minimum !== undefined) valid.push(String(s.minimum))
    if (s.maximum !== undefined) valid.push(String(s.maximum))
    if ((s.minimum ?? -1) <= 0 && (s.maximum ?? 1) > 0) valid.push("1e-200", "5e-324", "1e-40", "0.0")
    if (s.maximum !== undefined) invalid.push(String(s.maximum + 1e-6))
    if (s.minimum !== undefined) invalid.push(String(s.minimum - 1e-6))
  } else if (s.type === "string" && (s.minLength !== undefined || s.maxLength !== undefined)) {
    if (s.minLength !== undefined) valid.push("a".repeat(Math.max(1, s.minLength)))
    if (s.maxLength !== undefined) valid.push("a".repeat(s.maxLength))
    if (s.minLength !== undefined && s.minLength > 0) invalid.push("")
    if (s.maxLength !== undefined) invalid.push("a".repeat(s.maxLength + 1))
  }
  return { valid, invalid }
}

/** The parameter an answer's problem names, if any. */
const namedIn = (outcome: RawOutcome): Array<string> => {
  if (outcome.kind !== "answer" || outcome.status !== 400) return []
  try {
    const body = JSON.parse(outcome.body.toString("utf8"))
    return ((body.errors ?? []) as Array<{ path: string }>).map((e) => e.path)
  } catch {
    return []
  }
}

const parameterCases = (): Array<Case & { readonly parameter: string; readonly valid: boolean }> =>
  operations()
    .filter((o) => o.method === "GET" && !OPEN.has(o.operationId))
    .flatMap((o) =>
      ((o.op.parameters ?? []) as Array<any>)
        .filter((p) => p.in === "query")
        .flatMap((p) => {
          const { valid, invalid } = valuesOf(p.schema)
          const make = (value: string, isValid: boolean) => ({
            operation: o,
            parameter: p.name as string,
            valid: isValid,
            input: `${isValid ? "valid" : "invalid"} query ${p.name} = ${value.length > 20 ? `${value.length} characters` : value}`,
            request: () => ({
              method: o.method,
              path: `${pathOf(o)}?${p.name}=${encodeURIComponent(value)}`,
              headers: { "x-api-key": fx.key },
            }),
          })
          return [...valid.map((v) => make(v, true)), ...invalid.map((v) => make(v, false))]
        }),
    )

describe("requests generated from the description", () => {
  it("every described value of a query parameter is answered as documented; a value outside is a 400 naming it", async () => {
    const cases = parameterCases()
    expect(cases.length).toBeGreaterThan(50)
    const byCase = new Map(cases.map((c) => [c as Case, c]))
    const failures = await runCases(
      {
        raw,
        description,
        concurrency: CONCURRENCY,
        expect: (c, outcome) => {
          const generated = byCase.get(c)!
          const named = namedIn(outcome).includes(generated.parameter)
          if (generated.valid && named) return [`a valid ${generated.parameter} was refused`]
          if (!generated.valid && !named)
            return [`an invalid ${generated.parameter} was not refused naming it`]
          return []
        },
      },
      "query parameter values",
      cases,
    )
    expectNoFailures(failures, cases.length)
  }, 120_000)

  it("every operation that needs credentials answers 401 without them, before reading anything", async () => {
    const cases: Array<Case> = operations()
      .filter((o) => o.op.security?.length > 0 && !OPEN.has(o.operationId))
      .map((o) => ({
        operation: o,
        input: "no credentials, a NUL in the query and an unknown body member",
        request: () => ({
          method: o.method,
          path: `${pathOf(o)}?bogus=%00`,
          headers: { "content-type": "application/json" },
          ...(o.op.requestBody === undefined ? {} : { body: '{"bogus":1}' }),
        }),
      }))
    expect(cases.length).toBeGreaterThan(40)
    const failures = await runCases(
      {
        raw,
        description,
        concurrency: CONCURRENCY,
        expect: (_, outcome) =>
          outcome.kind === "answer" && outcome.status !== 401 ? [`answered ${outcome.status}, not 401`] : [],
      },
      "without credentials",
      cases,
    )
    expectNoFailures(failures, cases.length)
  }, 60_000)

  it("every method a described path does not have is 405 with Allow listing the described ones", async () => {
    const problems: Array<string> = []
    let sent = 0
    for (const [path, item] of Object.entries(description.doc.paths as Record<string, any>)) {
      const described = HTTP_METHODS.filter((m) => item[m] !== undefined).map((m) => m.toUpperCase())
      const o = { path, method: described[0]!, op: item[described[0]!.toLowerCase()] } as DescribedOperation
      for (const method of HTTP_METHODS.map((m) => m.toUpperCase()).filter((m) => !described.includes(m))) {
        sent++
        const outcome = await raw.send({ method, path: pathOf(o), headers: { "x-api-key": fx.key } })
        if (outcome.kind !== "answer") problems.push(`${method} ${path}: no answer`)
        else if (outcome.status !== 405) problems.push(`${method} ${path}: ${outcome.status}`)
        else {
          const allow = String(outcome.headers.allow ?? "")
            .split(", ")
            .sort()
          if (allow.join() !== [...described].sort().join())
            problems.push(
              `${method} ${path}: Allow ${outcome.headers.allow}, described ${described.join(", ")}`,
            )
          if (!String(outcome.headers["content-type"]).startsWith("application/problem+json"))
            problems.push(`${method} ${path}: not problem+json`)
        }
      }
    }
    expect(sent).toBeGreaterThan(100)
    expect(problems).toEqual([])
  }, 60_000)
})
