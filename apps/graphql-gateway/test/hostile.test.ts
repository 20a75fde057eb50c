/**
 * Hostile input against every query and mutation field of the schema that takes arguments (and the
 * object fields with arguments, reached through a query), over real HTTP on loopback and real
 * PostgreSQL, after real fixtures exist (a project with a processed document, a dimension, an agent and its
 * result from a real run, a folder, a webhook): each argument and each field of an input argument, sent as
 * a variable and written inline in the query, is replaced by NUL, a lone surrogate, 20,001 characters,
 * 1 MB, a 201-character name, Unicode, traversal, wrong types, null, out-of-range numbers, and, where JSON
 * is accepted, 10,000 levels of nesting; then a few broken requests. The inputs come from explicit tables.
 *
 * Every answer must come within 10 s with no HTTP 5xx, and every error must carry an `extensions.code`
 * other than INTERNAL_SERVER_ERROR. A failure lists the field, the input, the HTTP status and the start of
 * the answer.
 */
import { randomUUID } from "node:crypto"
import { createFixtures, type Fixtures } from "@dxs/testing/HostileFixtures"
import { expectNoFailures, type HostileFailure } from "@dxs/testing/HostileReport"
import { type RawOutcome, rawClient } from "@dxs/testing/RawClient"
import {
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
} from "graphql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { schema } from "../src/index.ts"
import { type Gateway, startGateway } from "./support.ts"

const CONCURRENCY = 4
const ANSWER_WITHIN_MS = 10_000
/** A public address: webhook targets are checked for private ones at creation (no DNS needed for this). */
const WEBHOOK_URL = "https://1.1.1.1/hook"

let gateway: Gateway
let key: string
let fx: Fixtures
let raw: ReturnType<typeof rawClient>
let graphqlPath: string

beforeAll(async () => {
  gateway = await startGateway({ worker: {} })
  key = await gateway.api.newKey(`hostile-${randomUUID()}`)
  fx = await createFixtures(gateway.api.client(key), WEBHOOK_URL)
  const url = new URL(gateway.url)
  graphqlPath = url.pathname
  raw = rawClient(url.origin, { sockets: CONCURRENCY, timeoutMs: ANSWER_WITHIN_MS })
}, 120_000)

afterAll(async () => {
  raw?.close()
  await gateway?.close()
})

// ---------------------------------------------------------------------------------------------------
// The inputs

const MB = 1024 * 1024

/** Hostile text. */
const TEXT: ReadonlyArray<readonly [string, unknown]> = [
  ["NUL", "a\u0000b"],
  ["lone surrogate", "a\uD800b"],
  ["20,001 characters", "x".repeat(20_001)],
  ["1 MB", "x".repeat(MB)],
  ["201-character name", "n".repeat(201)],
  ["empty", ""],
  ["unicode", "文件"],
  ["emoji", "📄🚀"],
  ["path traversal", "../../etc/passwd"],
]
const WRONG_TYPES: ReadonlyArray<readonly [string, unknown]> = [
  ["number for string", 12345],
  ["object", { a: 1 }],
  ["array", ["x"]],
  ["null", null],
]
const NUMBERS: ReadonlyArray<readonly [string, unknown]> = [
  ["-1", -1],
  ["2147483648", 2147483648],
  ["1e308", 1e308],
  ["1.5", 1.5],
  ["NaN (as text)", "NaN"],
]

/** 10,000 levels of nesting, as JSON text (also a valid GraphQL object literal without the quotes). */
const DEEP = `${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}`
const DEEP_LITERAL = `${"{a:".repeat(10_000)}1${"}".repeat(10_000)}`
const DEEP_MARK = "\u0001deep\u0001"

/**
 * Hostile values of variables for a position of this type: text and wrong types where text goes, numbers
 * out of range where numbers go, deep nesting where JSON goes; a few wrong types elsewhere (the same
 * coercion refuses any of them).
 */
const valuesFor = (type: GraphQLInputType): ReadonlyArray<readonly [string, unknown]> => {
  const named = getNamedType(type)
  const unwrapped = isNonNullType(type) ? type.ofType : type
  if (isListType(unwrapped))
    return [
      ["list of NUL", ["a\u0000b"]],
      ["text for list", "x"],
      ["object for list", { a: 1 }],
      ["null", null],
    ]
  if (isInputObjectType(named))
    return [
      ["text for input", "x"],
      ["array for input", ["x"]],
      ["number for input", 1],
      ["null", null],
    ]
  switch (named.name) {
    case "String":
    case "ID":
    case "StringOrNumber":
      return [...TEXT, ...WRONG_TYPES, ...(named.name === "StringOrNumber" ? NUMBERS : [])]
    case "Int":
    case "Float":
      return [...NUMBERS, ["text", "文件"], ["object", { a: 1 }], ["null", null]]
    case "JSON":
      return [
        ["10,000-deep JSON", DEEP_MARK],
        ["NUL", "a\u0000b"],
        ["NUL in a key", { "a\u0000": 1 }],
        ["1 MB", "x".repeat(MB)],
        ["number", 1e308],
        ["null", null],
      ]
    default:
      return [
        ["text", "文件"],
        ["number", 1.5],
        ["object", { a: 1 }],
        ["null", null],
      ]
  }
}

/** Hostile inline literals, as GraphQL source text, for a position of this type. */
const literalsFor = (type: GraphQLInputType): ReadonlyArray<readonly [string, string]> => {
  const named = getNamedType(type)
  const text: ReadonlyArray<readonly [string, string]> = [
    ["NUL", '"a\\u0000b"'],
    ["lone surrogate", '"a\\uD800b"'],
    ["20,001 characters", `"${"x".repeat(20_001)}"`],
    ["201-character name", `"${"n".repeat(201)}"`],
    ["unicode", '"文件"'],
    ["block string with traversal", '"""../../etc/passwd"""'],
  ]
  const wrong: ReadonlyArray<readonly [string, string]> = [
    ["number for string", "12345"],
    ["object", "{a: 1}"],
    ["null", "null"],
    ["enum-like name", "DROP_TABLE"],
  ]
  const numbers: ReadonlyArray<readonly [string, string]> = [
    ["2147483648", "2147483648"],
    ["1e308", "1e308"],
    ["1.5", "1.5"],
    ["-1", "-1"],
  ]
  switch (named.name) {
    case "String":
    case "ID":
    case "StringOrNumber":
      return [...text, ...wrong, ...(named.name === "StringOrNumber" ? numbers : [])]
    case "Int":
    case "Float":
      return [...numbers, ['"文件"'.length > 0 ? "text" : "", '"文件"'], ["null", "null"]]
    case "JSON":
      return [
        ["10,000-deep object literal", DEEP_LITERAL],
        ["NUL", '"a\\u0000b"'],
        ["10,000-deep list literal", `${"[".repeat(10_000)}${"]".repeat(10_000)}`],
      ]
    default:
      return [
        ["text", '"文件"'],
        ["number", "1.5"],
        ["null", "null"],
        ["list", '["x"]'],
      ]
  }
}

let counter = 0
const unique = () => `Fuzz ${++counter} ${randomUUID().slice(0, 8)}`

// ---------------------------------------------------------------------------------------------------
// The fields and their valid arguments

interface Target {
  /** `Mutation.createAgent`, `Project.schema_results`. */
  readonly id: string
  readonly operation: "query" | "mutation"
  readonly field: GraphQLField<unknown, unknown>
  /** Wraps the field's selection in what reaches it from the root. */
  readonly reach: (selection: string) => string
}

/** How a query reaches the object types that have fields with arguments. */
const reachOf: Record<string, (selection: string) => string> = {
  Query: (s) => s,
  Mutation: (s) => s,
  Project: (s) => `project(id: "${fx.project}") { ${s} }`,
  Agent: (s) => `project(id: "${fx.project}") { agents { ${s} } }`,
  Document: (s) => `project(id: "${fx.project}") { documents { ${s} } }`,
  ResultDetail: (s) => `result(projectId: "${fx.project}", id: "${fx.result}") { ${s} }`,
  WebhookSubscription: (s) => `webhook(id: "${fx.webhook}") { ${s} }`,
}

/** Every field with arguments, of the root types and of the object types below them. */
const targets = (): Array<Target> => {
  const found: Array<Target> = []
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith("__") || type.name === "Subscription") continue
    for (const field of Object.values(type.getFields())) {
      if (field.args.length === 0) continue
      const reach = reachOf[type.name]
      if (reach === undefined) throw new Error(`no way to reach ${type.name}.${field.name} from a query`)
      found.push({
        id: `${type.name}.${field.name}`,
        operation: type.name === "Mutation" ? "mutation" : "query",
        field,
        reach,
      })
    }
  }
  return found
}

/** Valid arguments of each field: the hostile cases change one argument, or one field of an input. */
const validArguments = (t: Target): Record<string, unknown> => {
  const p = fx.project
  const byField: Record<string, Record<string, unknown>> = {
    "Query.project": { id: p },
    "Query.results": { projectId: p },
    "Query.result": { projectId: p, id: fx.result },
    "Query.launchPreview": { projectId: p },
    "Query.runs": { projectId: p, limit: 5, offset: 0 },
    "Query.resultsGrid": { projectId: p, sort: "name", limit: 5 },
    "Query.documentsPage": { projectId: p, limit: 5 },
    "Query.fileEditStatus": { projectId: p },
    "Query.webhook": { id: fx.webhook },
    "Project.schema_results": { enrich: false },
    "Agent.relevant_pages": { documentId: fx.document, limit: 5 },
    "Document.content": { format: "MARKDOWN" },
    "ResultDetail.extractions": { limit: 5, offset: 0 },
    "WebhookSubscription.deliveries": { limit: 5, offset: 0 },
    "Mutation.setOutputSchema": {
      projectId: p,
      schema: { type: "object", properties: { total: { type: "number" } } },
      autoMap: false,
    },
    "Mutation.createProject": { input: { name: unique() } },
    "Mutation.updateProject": { id: p, input: {} },
    "Mutation.replaceProject": { id: p, input: { name: unique() } },
    "Mutation.deleteProject": { id: p },
    "Mutation.createFolder": { input: { name: unique() } },
    "Mutation.updateFolder": { id: fx.folder, input: {} },
    "Mutation.deleteFolder": { id: fx.folder },
    "Mutation.setDocumentTags": {
      projectId: p,
      documentId: fx.document,
      tags: [{ key: "region", value: "EU" }],
    },
    "Mutation.copyDocuments": { projectId: p, targetProjectId: fx.otherProject, documentIds: [fx.document] },
    "Mutation.archiveDocument": { projectId: p, documentId: fx.document },
    "Mutation.deleteDocument": { projectId: p, documentId: fx.document },
    "Mutation.reparseDocument": { projectId: p, documentId: fx.document },
    "Mutation.bulkDocuments": { projectId: p, input: { action: "archive", document_ids: [fx.document] } },
    "Mutation.clearFileEdit": { projectId: p },
    "Mutation.createAgent": { projectId: p, input: { name: unique() } },
    "Mutation.updateAgent": { projectId: p, id: fx.agent, input: {} },
    "Mutation.replaceAgent": { projectId: p, id: fx.agent, input: { name: fx.agentName } },
    "Mutation.deleteAgent": { projectId: p, id: fx.agent },
    "Mutation.launch": { projectId: p },
    "Mutation.createDimension": { projectId: p, input: { name: unique() } },
    "Mutation.updateDimension": { projectId: p, id: fx.dimension, input: {} },
    "Mutation.deleteDimension": { projectId: p, id: fx.dimension },
    "Mutation.overrideResult": { projectId: p, id: fx.result, input: { value: "1200" } },
    "Mutation.reviewResult": { projectId: p, id: fx.result, input: { status: "positive" } },
    "Mutation.createWebhook": { input: { url: WEBHOOK_URL, subscribed_events: ["webhook.ping"] } },
    "Mutation.updateWebhook": { id: fx.webhook, input: {} },
    "Mutation.deleteWebhook": { id: fx.webhook },
    "Mutation.testWebhook": { id: fx.webhook },
    "Mutation.rotateWebhookSecret": { id: fx.webhook },
  }
  const valid = byField[t.id]
  if (valid === undefined) throw new Error(`no valid arguments for ${t.id}`)
  return valid
}

/** A valid item of a list of inputs, for the cases that change one field of an item. */
const validItem: Record<string, Record<string, unknown>> = {
  AgentDimensionInput: { dimension_id: "$dimension", values: ["EU"] },
  AgentReferenceInput: { agent_id: "$agent" },
  DocumentTagInput: { key: "region", value: "EU" },
}
const itemOf = (type: string) =>
  Object.fromEntries(
    Object.entries(validItem[type] ?? {}).map(([k, v]) => [
      k,
      v === "$dimension" ? fx.dimension : v === "$agent" ? fx.agent : v,
    ]),
  )

/** Where a hostile value goes: an argument, a field of an input argument, or a field of its first item. */
interface Position {
  readonly label: string
  readonly type: GraphQLInputType
  readonly set: (args: Record<string, unknown>, value: unknown) => Record<string, unknown>
}

const positions = (t: Target): Array<Position> =>
  t.field.args.flatMap((arg: GraphQLArgument): Array<Position> => {
    const own: Position = { label: arg.name, type: arg.type, set: (args, v) => ({ ...args, [arg.name]: v }) }
    const named = getNamedType(arg.type)
    if (!isInputObjectType(named)) return [own]
    const inner = Object.values(named.getFields()).flatMap((f): Array<Position> => {
      const field: Position = {
        label: `${arg.name}.${f.name}`,
        type: f.type,
        set: (args, v) => ({ ...args, [arg.name]: { ...(args[arg.name] as object), [f.name]: v } }),
      }
      const item = getNamedType(f.type)
      const unwrapped = isNonNullType(f.type) ? f.type.ofType : f.type
      if (!isListType(unwrapped) || !isInputObjectType(item) || validItem[item.name] === undefined)
        return [field]
      return [
        field,
        ...Object.values(item.getFields()).map(
          (sub): Position => ({
            label: `${arg.name}.${f.name}[0].${sub.name}`,
            type: sub.type,
            set: (args, v) => ({
              ...args,
              [arg.name]: {
                ...(args[arg.name] as object),
                [f.name]: [{ ...itemOf(item.name), [sub.name]: v }],
              },
            }),
          }),
        ),
      ]
    })
    return [own, ...inner]
  })

/** The selection of a field's answer: `__typename` of an object, nothing of a scalar. */
const selectionOf = (t: Target) => (isObjectType(getNamedType(t.field.type)) ? " { __typename }" : "")

/** The operation with every argument as a variable. */
const withVariables = (t: Target) => {
  const declared = t.field.args.map((a) => `$${a.name}: ${a.type.toString()}`).join(", ")
  const passed = t.field.args.map((a) => `${a.name}: $${a.name}`).join(", ")
  return `${t.operation} Hostile(${declared}) { ${t.reach(`${t.field.name}(${passed})${selectionOf(t)}`)} }`
}

/** A JavaScript value as a GraphQL literal of `type` (enum values bare). */
const literal = (value: unknown, type: GraphQLInputType): string => {
  const named = getNamedType(type)
  if (value === null || value === undefined) return "null"
  if (typeof value === "string") return isEnumType(named) ? value : JSON.stringify(value)
  if (typeof value === "number" || typeof value === "boolean") return String(value)
  if (Array.isArray(value)) {
    const item = isNonNullType(type) ? type.ofType : type
    return `[${value.map((v) => literal(v, isListType(item) ? item.ofType : item)).join(", ")}]`
  }
  const fields = isInputObjectType(named) ? named.getFields() : undefined
  return `{${Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `${k}: ${literal(v, fields?.[k]?.type ?? type)}`)
    .join(", ")}}`
}

/** The operation with every argument written inline, one of them as hostile source text. */
const inline = (t: Target, args: Record<string, unknown>, position: Position, source: string) => {
  const marker = `\u0002${randomUUID()}\u0002`
  const withMark = position.set(args, marker)
  const written = t.field.args
    .filter((a) => withMark[a.name] !== undefined)
    .map((a) => `${a.name}: ${literal(withMark[a.name], a.type)}`)
    .join(", ")
    .replace(JSON.stringify(marker), source)
    .replace(marker, source)
  const call = written === "" ? t.field.name : `${t.field.name}(${written})`
  return `${t.operation} { ${t.reach(`${call}${selectionOf(t)}`)} }`
}

// ---------------------------------------------------------------------------------------------------
// Sending and judging

interface Case {
  readonly target: string
  readonly input: string
  readonly body: () => string
  readonly contentType?: string
}

const requestBody = (query: string, variables: Record<string, unknown> = {}) =>
  JSON.stringify({ query, variables }).replace(JSON.stringify(DEEP_MARK), DEEP)

/** What is wrong with an answer (empty: nothing). */
const judge = (outcome: RawOutcome): Array<string> => {
  if (outcome.kind === "no answer") return [outcome.reason]
  const problems: Array<string> = []
  if (outcome.status >= 500) problems.push(`HTTP ${outcome.status}`)
  let body: any
  try {
    body = JSON.parse(outcome.body.toString("utf8"))
  } catch {
    return [...problems, "the answer is not JSON"]
  }
  const errors: Array<any> = Array.isArray(body?.errors) ? body.errors : []
  if (outcome.status >= 400 && errors.length === 0) problems.push(`HTTP ${outcome.status} without errors`)
  for (const e of errors) {
    const code = e?.extensions?.code
    if (typeof code !== "string")
      problems.push(`an error without extensions.code: ${String(e?.message).slice(0, 120)}`)
    else if (code === "INTERNAL_SERVER_ERROR") problems.push("INTERNAL_SERVER_ERROR")
  }
  return [...new Set(problems)]
}

const run = async (name: string, cases: ReadonlyArray<Case>) => {
  const failures: Array<HostileFailure> = []
  const codes = new Map<string, number>()
  let next = 0
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++]!
      const outcome = await raw.send({
        method: "POST",
        path: graphqlPath,
        headers: { "content-type": c.contentType ?? "application/json", "x-api-key": key },
        body: c.body(),
      })
      if (outcome.kind === "answer") {
        let code = "data"
        try {
          code = JSON.parse(outcome.body.toString("utf8"))?.errors?.[0]?.extensions?.code ?? "data"
        } catch {
          code = "not JSON"
        }
        const tally = `${outcome.status}:${code}`
        codes.set(tally, (codes.get(tally) ?? 0) + 1)
      } else codes.set("none", (codes.get("none") ?? 0) + 1)
      const problems = judge(outcome)
      if (problems.length > 0)
        failures.push({
          request: `${c.target} [${c.input}]`,
          problems,
          status: outcome.kind === "answer" ? String(outcome.status) : "—",
          body: outcome.kind === "answer" ? outcome.body.toString("utf8").slice(0, 200) : "",
        })
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  console.info(
    `${name}: ${cases.length} requests, answered ${[...codes]
      .sort()
      .map(([c, n]) => `${c}×${n}`)
      .join(" ")}`,
  )
  return failures
}

const stillHealthy = async () => {
  const r = await fetch(gateway.url, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify({ query: "{ projects { id } }" }),
  })
  expect(r.status).toBe(200)
  const body = (await r.json()) as { data?: { projects?: Array<unknown> }; errors?: unknown }
  expect(body.errors).toBeUndefined()
  expect(body.data?.projects?.length).toBeGreaterThan(0)
}

// ---------------------------------------------------------------------------------------------------
// The classes of hostile input

const variableCases = (): Array<Case> =>
  targets().flatMap((t) =>
    positions(t).flatMap((position) => {
      return valuesFor(position.type).map(([label, value]) => ({
        target: t.id,
        input: `$${position.label} = ${label}`,
        body: () => requestBody(withVariables(t), position.set(validArguments(t), value)),
      }))
    }),
  )

const literalCases = (): Array<Case> =>
  targets().flatMap((t) =>
    positions(t).flatMap((position) => {
      return literalsFor(position.type).map(([label, source]) => ({
        target: t.id,
        input: `${position.label}: ${label} (inline)`,
        body: () => requestBody(inline(t, validArguments(t), position, source)),
      }))
    }),
  )

const requestCases = (): Array<Case> => {
  const create = "mutation($input: ProjectInput!) { createProject(input: $input) { id } }"
  const shapes: Array<readonly [string, () => string, string?]> = [
    ["malformed JSON", () => '{"query": "{ projects { id } }",'],
    ["empty body", () => ""],
    ["JSON null", () => "null"],
    ["JSON array", () => "[]"],
    ["query not a string", () => JSON.stringify({ query: 12345 })],
    ["variables not an object", () => JSON.stringify({ query: create, variables: "x" })],
    ["10,000-deep variables", () => `{"query": ${JSON.stringify(create)}, "variables": {"input": ${DEEP}}}`],
    [
      "body over 1 MB",
      () => JSON.stringify({ query: create, variables: { input: { name: "x".repeat(MB + 1) } } }),
    ],
    [
      "query over 1 MB of selections",
      () => JSON.stringify({ query: `{ ${"projects { id } ".repeat(70_000)} }` }),
    ],
    ["NUL in the query text", () => JSON.stringify({ query: "{ projects\u0000 { id } }" })],
    ["lone surrogate in the query text", () => JSON.stringify({ query: "{ projects { id } } # \uD800" })],
    [
      "10,000 aliases",
      () =>
        JSON.stringify({
          query: `{ ${Array.from({ length: 10_000 }, (_, i) => `a${i}: projects { id }`).join(" ")} }`,
        }),
    ],
    [
      "10,000-deep list literal",
      () => JSON.stringify({ query: `{ projects(x: ${"[".repeat(10_000)}${"]".repeat(10_000)}) { id } }` }),
    ],
    ["unknown operation name", () => JSON.stringify({ query: "{ projects { id } }", operationName: "Nope" })],
    ["text/plain", () => JSON.stringify({ query: "{ projects { id } }" }), "text/plain"],
    ["multipart without a boundary", () => "--x\r\n", "multipart/form-data"],
  ]
  return shapes.map(([label, body, contentType]) => ({
    target: "POST /graphql",
    input: label,
    body,
    ...(contentType === undefined ? {} : { contentType }),
  }))
}

const classes: ReadonlyArray<readonly [string, () => Array<Case>]> = [
  ["hostile variables", variableCases],
  ["hostile inline literals", literalCases],
  ["broken requests", requestCases],
]

describe("hostile input against every field of the GraphQL schema that takes arguments", () => {
  it("reaches every such field", () => {
    expect(targets().length).toBeGreaterThan(30)
  })

  for (const [name, make] of classes) {
    it(`${name}: answered within 10 s, no HTTP 5xx, every error coded, none INTERNAL_SERVER_ERROR`, async () => {
      const cases = make()
      expectNoFailures(await run(name, cases), cases.length)
    }, 180_000)

    it(`${name}: the gateway still answers afterwards`, stillHealthy)
  }
})
