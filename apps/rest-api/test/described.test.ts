/**
 * Requests generated from the API's own OpenAPI description, over real HTTP and real PostgreSQL, aimed at
 * real fixtures (`@dxs/testing/HostileFixtures`), every answer judged by the description's own responses
 * (judge.ts):
 *
 * - every value the description allows for a query parameter (each end of a number's range, the smallest
 *   doubles and denormals inside a range that includes 0, each member of an enum, strings of the smallest
 *   and largest described length) is answered as documented and never refused for that parameter; each value
 *   just outside what it allows is a 400 naming the parameter;
 * - every operation that needs credentials answers 401 without them, whatever else is wrong with the
 *   request (a NUL in the query, an unknown body member);
 * - every method a described path does not have is 405 with `Allow` listing exactly the described methods;
 * - every operation with a JSON body (but file uploads) takes a minimal body (required members only) and a
 *   full one (every described member, strings at their largest length), made from its schema with the
 *   fixtures' ids, without refusing either for a member; the same body with an unknown member in any object
 *   the description closes, with a required member left out or with a member or an array's item of another
 *   JSON type (string↔number, array↔object, an object as its JSON text, …), at any depth, is a 400 naming
 *   that member.
 *
 * Deterministic (no randomness) and bounded (a few hundred requests).
 */
import { randomUUID } from "node:crypto"
import { createFixtures, type Fixtures } from "@dxs/testing/HostileFixtures"
import { expectNoFailures } from "@dxs/testing/HostileReport"
import { type RawOutcome, rawClient } from "@dxs/testing/RawClient"
import { createAgent } from "@dxs/testing/Runs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  compileDescription,
  type Description,
  errorsText,
  HTTP_METHODS,
  operationsOf,
} from "./description.ts"
import { startTestApi, type TestApi } from "./harness.ts"
import { type Case, type DescribedOperation, runCases } from "./judge.ts"

const CONCURRENCY = 4

let api: TestApi
let description: Description
let raw: ReturnType<typeof rawClient>
let fx: Fixtures & { readonly key: string }
/** The organisation of the key and fixtures. */
const ORG = `described-${randomUUID()}`

beforeAll(async () => {
  api = await startTestApi({ worker: {} })
  const key = await api.newKey(ORG)
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
const pathValue = (o: DescribedOperation, name: string, f: Fixtures): string => {
  if (name === "id") {
    if (o.path.startsWith("/api/v1/folders/")) return f.folder
    if (o.path.startsWith("/api/v1/webhooks/")) return f.webhook
    if (o.path.startsWith("/api/v1/keys/")) return randomUUID()
    return f.project
  }
  const byName: Record<string, string> = {
    project_id: f.project,
    agent_id: f.agent,
    dimension_id: f.dimension,
    document_id: f.document,
    page_number: "1",
    run_number: "1",
    resolution_result_id: f.result,
    extraction_id: f.extraction,
  }
  return byName[name] ?? randomUUID()
}

/** The operation's path with its parameters naming fixtures (the suite's own, unless others are given). */
const pathOf = (o: DescribedOperation, f: Fixtures = fx) =>
  o.path.replace(/\{(\w+)\}/g, (_, name: string) => pathValue(o, name, f))

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

// ---------------------------------------------------------------------------------------------------------
// Request bodies

/** The body operations' own fixtures: the changes their bodies make stay there. */
let bx: Fixtures
/** What the body operations' paths name: `bx`, with the agent updated being one of its own. */
let targets: Fixtures
/** A member's session: keys are managed by members, not by keys. */
let session: { readonly cookie: string; readonly "x-csrf-token": string }

/** A public-looking address: nothing is resolved or delivered in this suite. */
const HOOK_URL = "https://93.184.216.34/hook"

/** Values the schema allows that an operation also needs to take them (what a schema cannot say). */
const MEMBER_VALUES: Record<string, unknown> = {
  // Event names are those of GET /webhooks/events/.
  "subscribed_events/0": "webhook.ping",
  // The fixture result's agent is a number agent: its value must be a number.
  "results.override value": 1200,
  // The smallest mapping of the schema's root (a mapping's nodes are the mapping's rules, not a schema's).
  "outputSchema.put mapping": { kind: "object", properties: {} },
}

/** The fixture a member holding an id names. */
const idOf = (o: DescribedOperation, member: string): string => {
  const ids: Record<string, string> = {
    folder_id: bx.folder,
    // A folder other than the one updated (a folder cannot be its own parent).
    parent_id: fx.folder,
    dimension_id: bx.dimension,
    agent_id: bx.agent,
    // Bulk actions (delete, archive) take the spare document; copies the one with results.
    document_ids: o.operationId === "documents.bulk" ? bx.spareDocument : bx.document,
    target_project_id: bx.otherProject,
  }
  const id = ids[member]
  if (id === undefined) throw new Error(`${o.operationId}: no fixture for the id in ${member}`)
  return id
}

type Variant = "minimal" | "full"

/** A member (or an array's item) of a generated body: where it is, its schema, whether it is required. */
interface BodyMember {
  readonly path: ReadonlyArray<string>
  readonly schema: any
  readonly required: boolean
}

/** A generated body, with its members and its objects that take no other members, at every depth. */
interface Body {
  readonly value: unknown
  readonly members: Array<BodyMember>
  readonly closed: Array<ReadonlyArray<string>>
}

/** `allOf` parts as one object schema; of `anyOf`/`oneOf`, the first alternative other than null. */
const chosen = (schema: any): any => {
  const s = resolve(schema) ?? {}
  if (Array.isArray(s.allOf)) {
    const parts = s.allOf.map(chosen)
    return {
      type: "object",
      properties: Object.assign({}, ...parts.map((p: any) => p.properties ?? {})),
      required: parts.flatMap((p: any) => p.required ?? []),
      ...(parts.some((p: any) => p.additionalProperties === false) ? { additionalProperties: false } : {}),
    }
  }
  const alternatives = s.anyOf ?? s.oneOf
  if (Array.isArray(alternatives))
    return chosen(alternatives.find((a: any) => resolve(a).type !== "null") ?? alternatives[0])
  return s
}

/** A string of the schema: a fixture id, a value of its format, or the member's label within its lengths. */
const stringOf = (o: DescribedOperation, s: any, at: ReadonlyArray<string>, variant: Variant) => {
  const member = at.findLast((p) => !/^\d+$/.test(p)) ?? ""
  if (s.format === "uuid") return idOf(o, member)
  if (s.format === "date") return "2024-03-03"
  if (s.format === "date-time") return "2024-03-03T10:00:00Z"
  if (s.format === "email") return "reviewer@example.com"
  if (s.format === "uri") return HOOK_URL
  const label = `${o.operationId} ${variant} ${at.join("/")}`
  // The full body takes each string to its largest described length.
  const length =
    variant === "full" && s.maxLength !== undefined
      ? s.maxLength
      : Math.max(s.minLength ?? 0, Math.min(label.length, s.maxLength ?? label.length))
  return label.padEnd(length, "x").slice(0, length)
}

/**
 * A value of the schema: with only the required members of each object (`minimal`, empty arrays where
 * allowed, the smallest numbers) or every described member (`full`, one item in arrays, the largest numbers
 * and strings); the members and closed objects are recorded in `body`.
 */
const bodyValue = (
  o: DescribedOperation,
  schema: any,
  at: ReadonlyArray<string>,
  variant: Variant,
  body: Body,
): unknown => {
  const hinted = [`${o.operationId} ${at.join("/")}`, at.join("/")].find((k) => k in MEMBER_VALUES)
  if (hinted !== undefined) return MEMBER_VALUES[hinted]
  const s = chosen(schema)
  if (Array.isArray(s.enum)) return s.enum[0]
  if (s.const !== undefined) return s.const
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== "null") : s.type
  if (type === "string") return stringOf(o, s, at, variant)
  if (type === "integer" || type === "number") {
    const low: number | undefined =
      s.minimum ?? (s.exclusiveMinimum === undefined ? undefined : s.exclusiveMinimum + 1)
    const high: number | undefined =
      s.maximum ?? (s.exclusiveMaximum === undefined ? undefined : s.exclusiveMaximum - 1)
    return variant === "full" ? (high ?? low ?? 7) : (low ?? Math.min(high ?? 7, 7))
  }
  if (type === "boolean") return false
  if (type === "null") return null
  if (type === "array") {
    const count = Math.max(s.minItems ?? 0, variant === "full" ? 1 : 0)
    return Array.from({ length: count }, (_, i) => {
      // An item is not left out as a member is, but may be of the wrong type as one.
      body.members.push({ path: [...at, String(i)], schema: s.items ?? {}, required: false })
      return bodyValue(o, s.items ?? {}, [...at, String(i)], variant, body)
    })
  }
  if (type === "object" || s.properties !== undefined) {
    if (s.additionalProperties === false) body.closed.push(at)
    const required = new Set<string>(s.required ?? [])
    const names = Object.keys(s.properties ?? {}).filter((n) => variant === "full" || required.has(n))
    const value: Record<string, unknown> = {}
    for (const name of names) {
      body.members.push({ path: [...at, name], schema: s.properties[name], required: required.has(name) })
      value[name] = bodyValue(o, s.properties[name], [...at, name], variant, body)
    }
    if (variant === "full" && typeof s.additionalProperties === "object") {
      const name = "x-example"
      body.members.push({ path: [...at, name], schema: s.additionalProperties, required: false })
      value[name] = bodyValue(o, s.additionalProperties, [...at, name], variant, body)
    }
    return value
  }
  return {}
}

const bodyOf = (o: DescribedOperation, variant: Variant): Body => {
  const body: Body = { value: undefined, members: [], closed: [] }
  const value = bodyValue(o, o.op.requestBody.content["application/json"].schema, [], variant, body)
  return { ...body, value }
}

const jsonType = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v)

/** The JSON types a schema allows (all of them for a schema that says none). */
const typesOf = (schema: any): Set<string> => {
  const s = resolve(schema) ?? {}
  const alternatives = s.anyOf ?? s.oneOf ?? s.allOf
  if (Array.isArray(alternatives)) return new Set(alternatives.flatMap((a: any) => [...typesOf(a)]))
  if (Array.isArray(s.enum)) return new Set(s.enum.map(jsonType))
  const types = (Array.isArray(s.type) ? s.type : [s.type]).filter((t: unknown) => t !== undefined)
  if (types.length === 0 && (s.properties !== undefined || s.additionalProperties !== undefined))
    types.push("object")
  if (types.length === 0) return new Set(["string", "number", "boolean", "null", "array", "object"])
  return new Set(
    types.map((t: string) => (t === "integer" ? "number" : t)).concat(s.nullable ? ["null"] : []),
  )
}

/**
 * Values of other JSON types than the member's, if the schema has any: the swapped type (string↔number,
 * array↔object, …), and for an object also its JSON text (a form's way of sending it, not JSON's).
 */
const wrongTypesOf = (value: unknown, schema: any): Array<unknown> => {
  const swapped: Record<string, unknown> = {
    string: 7,
    number: String(value),
    boolean: String(value),
    array: {},
    object: [],
    null: 7,
  }
  const allowed = typesOf(schema)
  const other = [swapped[jsonType(value)], 7, "seven", true, [], {}].find((v) => !allowed.has(jsonType(v)))
  const text = jsonType(value) === "object" && !allowed.has("string") ? [JSON.stringify(value)] : []
  return [...(other === undefined ? [] : [other]), ...text]
}

/** The body with the value at `path` replaced (`undefined`: left out). */
const withMember = (value: unknown, path: ReadonlyArray<string>, member: unknown): unknown => {
  const copy = structuredClone(value) as any
  let parent = copy
  for (const p of path.slice(0, -1)) parent = parent[p]
  if (member === undefined) delete parent[path.at(-1)!]
  else parent[path.at(-1)!] = member
  return copy
}

/** Operations with a JSON body this suite sends. */
const bodyOperations = () =>
  operations().filter(
    (o) => o.op.requestBody?.content?.["application/json"] !== undefined && !OPEN.has(o.operationId),
  )

const bodyRequest = (o: DescribedOperation, value: unknown) => () => ({
  method: o.method,
  path: pathOf(o, targets),
  headers: {
    ...(o.operationId.startsWith("keys.") ? session : { "x-api-key": fx.key }),
    "content-type": "application/json",
  },
  body: JSON.stringify(value),
})

/** Each operation's minimal and full valid bodies, in the description's order. */
const validBodyCases = (): Array<Case & { readonly body: unknown }> =>
  bodyOperations().flatMap((o) =>
    (["minimal", "full"] as const).map((variant) => {
      const { value } = bodyOf(o, variant)
      return { operation: o, input: `${variant} valid body`, body: value, request: bodyRequest(o, value) }
    }),
  )

/** Bodies that are wrong in one member, each with the member its refusal must name. */
const invalidBodyCases = (): Array<Case & { readonly member: string }> =>
  bodyOperations().flatMap((o) => {
    const full = bodyOf(o, "full")
    const make = (input: string, path: ReadonlyArray<string>, value: unknown) => ({
      operation: o,
      input,
      member: path.join("/"),
      request: bodyRequest(o, value),
    })
    const unknown = full.closed.map((at) =>
      make(
        `unknown member in ${at.join("/") || "the body"}`,
        [...at, "unknown_member"],
        withMember(full.value, [...at, "unknown_member"], 1),
      ),
    )
    const missing = full.members
      .filter((m) => m.required)
      .map((m) => make(`${m.path.join("/")} left out`, m.path, withMember(full.value, m.path, undefined)))
    const wrong = full.members.flatMap((m) => {
      const current = m.path.reduce((v: any, p) => v[p], full.value)
      return wrongTypesOf(current, m.schema).map((replaced) =>
        make(
          `${m.path.join("/")} = ${JSON.stringify(replaced)}`,
          m.path,
          withMember(full.value, m.path, replaced),
        ),
      )
    })
    return [...unknown, ...missing, ...wrong]
  })

describe("request bodies generated from the description", () => {
  beforeAll(async () => {
    const client = api.client(fx.key)
    bx = await createFixtures(client, HOOK_URL)
    const agent = await createAgent(client, bx.project, {
      name: "Updated by bodies",
      extraction_instructions: "The invoice number",
      value_type: "string",
    })
    targets = { ...bx, agent: agent.id }
    const email = `member-${randomUUID()}@example.com`
    const password = `pw-${randomUUID()}`
    await api.newMember(ORG, email, password)
    const signIn = await fetch(`${api.base}/auth/sign-in/`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password }),
    })
    expect(signIn.status).toBe(200)
    session = {
      cookie: /^(dxs_session=[^;]+)/.exec(signIn.headers.get("set-cookie") ?? "")?.[1] ?? "",
      "x-csrf-token": ((await signIn.json()) as { csrf_token: string }).csrf_token,
    }
  }, 120_000)

  it("every operation's minimal and full valid bodies are answered as documented, never refused for their shape", async () => {
    const cases = validBodyCases()
    expect(cases.length).toBeGreaterThan(20)
    for (const c of cases) {
      const validate = description.validator([
        "paths",
        c.operation.path,
        c.operation.method.toLowerCase(),
        "requestBody",
        "content",
        "application/json",
        "schema",
      ])
      expect(validate(c.body), `${c.operation.id} [${c.input}]: ${errorsText(validate.errors)}`).toBe(true)
    }
    const byCase = new Map(cases.map((c) => [c as Case, c]))
    // One at a time, in the description's order: the bodies change their fixtures (a folder moved, a
    // document deleted), so each answer is the same from run to run.
    const failures = await runCases(
      {
        raw,
        description,
        concurrency: 1,
        expect: (c, outcome) => {
          const members = Object.keys(byCase.get(c)!.body as object)
          const refused = namedIn(outcome).filter((p) => members.includes(p.split("/")[0]!))
          return refused.length > 0 ? [`refused for ${refused.join(", ")}`] : []
        },
      },
      "valid bodies",
      cases,
    )
    expectNoFailures(failures, cases.length)
  }, 120_000)

  it("a body with an unknown member, a required member left out or a member of the wrong type is a 400 naming it", async () => {
    const cases = invalidBodyCases()
    expect(cases.length).toBeGreaterThan(100)
    const byCase = new Map(cases.map((c) => [c as Case, c]))
    const failures = await runCases(
      {
        raw,
        description,
        concurrency: CONCURRENCY,
        expect: (c, outcome) => {
          const { member } = byCase.get(c)!
          return namedIn(outcome).includes(member) ? [] : [`not refused naming ${member}`]
        },
      },
      "invalid bodies",
      cases,
    )
    expectNoFailures(failures, cases.length)
  }, 120_000)
})
