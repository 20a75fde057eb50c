/**
 * Hostile input against every operation of the API's own OpenAPI description, over real HTTP on loopback
 * and real PostgreSQL, after real fixtures exist (a project with a processed document, a dimension, an
 * agent and its result from a real run, a folder, a webhook, a member's key): for each path parameter,
 * query parameter and body field (JSON, form and multipart), strings with NUL, lone surrogates, 20,001
 * characters, 1 MB, 201-character names, Unicode, emoji and path traversal, wrong types and numbers out
 * of range; malformed, empty, deep, oversized and mistyped bodies; broken multipart; hostile file names on
 * the uploads. The inputs come from explicit tables (no randomness).
 *
 * Every answer must come within 10 s, never be a 5xx, be a status the description documents for the
 * operation, match the description's schema for that status and media type, and, when it is a 4xx, be
 * problem+json with `type`, `title`, `status`, `detail` and `request_id`. A failure lists the operation,
 * the input, the status and the start of the body. After each class of input the server still answers.
 */
import { randomUUID } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { onePagePdf } from "@dxs/testing/Documents"
import { createFixtures, type Fixtures } from "@dxs/testing/HostileFixtures"
import { expectNoFailures } from "@dxs/testing/HostileReport"
import { type RawRequest, rawClient } from "@dxs/testing/RawClient"
import type { Client } from "@dxs/testing/RestClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { compileDescription, type Description, operationsOf } from "./description.ts"
import { startTestApi, type TestApi } from "./harness.ts"
import { type Case, type DescribedOperation, runCases } from "./judge.ts"

/** Requests in flight at once. */
const CONCURRENCY = 4
/** An answer later than this is a failure: no request may go unanswered. */
const ANSWER_WITHIN_MS = 10_000

const PASSWORD = "a long enough password"

let api: TestApi
let a: Client
let description: Description
let raw: ReturnType<typeof rawClient>
let hook: http.Server

/** The real resources the operations are aimed at, and how to act as the organisation. */
interface Setting extends Fixtures {
  readonly key: string
  readonly session: { readonly cookie: string; readonly csrf: string }
  readonly signInEmail: string
  readonly hookUrl: string
  readonly memberKey: string
  /** The query of the document's signed file_url. */
  readonly fileQuery: { readonly expires: string; readonly signature: string }
}
let fx: Setting

beforeAll(async () => {
  hook = http.createServer((_req, res) => res.writeHead(204).end())
  await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve))
  const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`
  api = await startTestApi({ worker: {}, webhooks: { allowLoopback: true } })
  const org = `hostile-${randomUUID()}`
  const key = await api.newKey(org)
  a = api.client(key)
  raw = rawClient(api.origin, { sockets: CONCURRENCY, timeoutMs: ANSWER_WITHIN_MS })

  const email = `member-${randomUUID()}@example.com`
  const signInEmail = `sign-in-${randomUUID()}@example.com`
  await api.newMember(org, email, PASSWORD)
  await api.newMember(org, signInEmail, PASSWORD)
  const signIn = await fetch(`${api.base}/auth/sign-in/`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: PASSWORD }),
  })
  expect(signIn.status).toBe(200)
  const session = {
    cookie: /^(dxs_session=[^;]+)/.exec(signIn.headers.get("set-cookie") ?? "")?.[1] ?? "",
    csrf: ((await signIn.json()) as { csrf_token: string }).csrf_token,
  }
  const memberKey = await fetch(`${api.base}/keys/`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie: session.cookie, "x-csrf-token": session.csrf },
    body: JSON.stringify({ name: "hostile-input fixture" }),
  }).then((r) => r.json() as Promise<{ id: string }>)

  const fixtures = await createFixtures(a, hookUrl)
  const fileUrl = new URL(fixtures.fileUrl)
  fx = {
    ...fixtures,
    key,
    session,
    signInEmail,
    hookUrl,
    memberKey: memberKey.id,
    fileQuery: {
      expires: fileUrl.searchParams.get("expires") ?? "",
      signature: fileUrl.searchParams.get("signature") ?? "",
    },
  }
  const served = await a.get("/schema/?format=json")
  description = compileDescription(served.body)
}, 120_000)

afterAll(async () => {
  raw?.close()
  await new Promise((resolve) => hook?.close(resolve))
})

// ---------------------------------------------------------------------------------------------------
// The inputs

const MB = 1024 * 1024

/** Hostile strings: for every parameter and field. */
const STRINGS: ReadonlyArray<readonly [string, string]> = [
  ["NUL", "a\u0000b"],
  ["lone surrogate", "a\uD800b"],
  ["20,001 characters", "x".repeat(20_001)],
  ["1 MB", "x".repeat(MB)],
  ["201-character name", "n".repeat(201)],
  ["empty", ""],
  ["unicode", "文件"],
  ["emoji", "📄🚀"],
  ["dot-dot", ".."],
  ["path traversal", "../../etc/passwd"],
  ["-1", "-1"],
  ["2147483648", "2147483648"],
  ["1e308", "1e308"],
  ["NaN", "NaN"],
  ["1.5", "1.5"],
]

/** The strings that are hostile as such (the numeric ones only matter where everything is a string). */
const TEXT = STRINGS.filter(([label]) => !["-1", "2147483648", "1e308", "NaN", "1.5"].includes(label))

/** Hostile JSON values: the strings, wrong types, and numbers out of range. */
const VALUES: ReadonlyArray<readonly [string, unknown]> = [
  ...TEXT,
  ["NaN (as text)", "NaN"],
  ["number for string", 12345],
  ["object", { a: 1 }],
  ["array", ["x"]],
  ["null", null],
  ["number -1", -1],
  ["number 2147483648", 2147483648],
  ["number 1e308", 1e308],
  ["number 1.5", 1.5],
]

/** Hostile form values (every form value is text). */
const FORM_VALUES = STRINGS.filter(([label]) => !["emoji", "dot-dot", "-1", "1e308"].includes(label))

/** Percent-encoding for a URL; a lone surrogate (which UTF-8 cannot carry) as its WTF-8 bytes. */
const encode = (s: string) =>
  s
    .split(/([\uD800-\uDFFF])/)
    .map((part) =>
      /^[\uD800-\uDFFF]$/.test(part)
        ? [
            ...Buffer.from([
              0xe0 | (part.charCodeAt(0) >> 12),
              0x80 | ((part.charCodeAt(0) >> 6) & 0x3f),
              0x80 | (part.charCodeAt(0) & 0x3f),
            ]),
          ]
            .map((b) => `%${b.toString(16).toUpperCase()}`)
            .join("")
        : encodeURIComponent(part),
    )
    .join("")

/** UTF-8 bytes of a string; a lone surrogate as its WTF-8 bytes (invalid UTF-8, as a hostile client sends). */
const bytesOf = (s: string) => Buffer.from(decodeURIComponentLoose(encode(s)), "latin1")
const decodeURIComponentLoose = (s: string) =>
  s.replace(/%([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)))

/** A broken escape, and an escape of a byte sequence that is not UTF-8. */
const BAD_ESCAPES = "%ZZ%E0%A4%A"

const deepJson = (n: number) => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`

let counter = 0
const unique = (what: string) => `${what} ${++counter} ${randomUUID().slice(0, 8)}`

// ---------------------------------------------------------------------------------------------------
// The operations, their fixtures and valid bodies

type Operation = DescribedOperation

const operations = (): Array<Operation> =>
  operationsOf(description.doc).map(({ method, path, op }) => ({
    method: method.toUpperCase(),
    path,
    op,
    id: `${method.toUpperCase()} ${path}`,
    operationId: op.operationId as string,
  }))

const UPLOADS = new Set([
  "documents.upload",
  "documents.replaceFile",
  "outputSchema.extract",
  "fileEdit.start",
])

/** The fixture a path parameter names. */
const pathValue = (o: Operation, name: string): string => {
  if (name === "id") {
    if (o.path.startsWith("/api/v1/folders/")) return fx.folder
    if (o.path.startsWith("/api/v1/webhooks/")) return fx.webhook
    if (o.path.startsWith("/api/v1/keys/")) return fx.memberKey
    return fx.project
  }
  const byName: Record<string, string> = {
    project_id: fx.project,
    agent_id: fx.agent,
    dimension_id: fx.dimension,
    document_id: o.operationId === "documents.replaceFile" ? fx.spareDocument : fx.document,
    page_number: "1",
    run_number: "1",
    resolution_result_id: fx.result,
    extraction_id: fx.extraction,
  }
  const value = byName[name]
  if (value === undefined) throw new Error(`no fixture for path parameter ${name} of ${o.id}`)
  return value
}

const pathParameters = (o: Operation): Array<string> =>
  (o.op.parameters ?? []).filter((p: any) => p.in === "path").map((p: any) => p.name as string)
const queryParameters = (o: Operation): Array<string> =>
  (o.op.parameters ?? []).filter((p: any) => p.in === "query").map((p: any) => p.name as string)

/** The query every request of the operation carries (required parameters, valid). */
const baseQuery = (o: Operation): Record<string, string> =>
  o.operationId === "files.download" ? { ...fx.fileQuery } : {}

/** The request target with `override` of one path parameter (already encoded) and the query. */
const target = (o: Operation, override: Record<string, string> = {}, query?: string) => {
  const path = o.path.replace(/\{(\w+)\}/g, (_, name: string) => override[name] ?? pathValue(o, name))
  const q =
    query ??
    Object.entries(baseQuery(o))
      .map(([k, v]) => `${k}=${encode(v)}`)
      .join("&")
  return q === "" ? path : `${path}?${q}`
}

/** How the operation authenticates: members' key management by session, the open ones not at all. */
const authHeaders = (o: Operation): Record<string, string> => {
  if (o.operationId.startsWith("keys.")) return { cookie: fx.session.cookie, "x-csrf-token": fx.session.csrf }
  if (["meta.schema", "auth.signIn", "files.download"].includes(o.operationId)) return {}
  return { "x-api-key": fx.key }
}

/** A valid body of each operation that takes one: the hostile cases change one field of it. */
const validBody = (o: Operation): Record<string, unknown> => {
  const schema = { type: "object", properties: { total: { type: "number" } } }
  switch (o.operationId) {
    case "auth.signIn":
      return { email: fx.signInEmail, password: PASSWORD }
    case "keys.create":
      return { name: "hostile-input key" }
    case "projects.create":
    case "projects.put":
    case "folders.create":
    case "agents.create":
    case "dimensions.create":
      return { name: unique("Fuzz") }
    case "agents.put":
      return { name: fx.agentName }
    case "documents.copy":
      return { target_project_id: fx.otherProject, document_ids: [fx.document] }
    case "documents.bulk":
      // Archiving an unknown document: a 200 that lists it as failed, and the fixtures stay.
      return { action: "archive", document_ids: ["00000000-0000-4000-8000-000000000000"] }
    case "documents.setTags":
      return { tags: [{ key: "region", value: "EU" }] }
    case "results.override":
      return { value: "1200" }
    case "results.review":
      return { status: "positive" }
    case "outputSchema.put":
      return { schema, auto_map: false }
    case "webhooks.create":
      return { url: fx.hookUrl, subscribed_events: ["webhook.ping"] }
    case "documents.upload":
      return {}
    case "outputSchema.extract":
      return { schema: JSON.stringify(schema), auto_map: "false" }
    default:
      return {}
  }
}

/** A valid item of an array field, for the cases that change one field of an item. */
const validItem = (field: string): Record<string, unknown> | undefined =>
  ({
    dimensions: { dimension_id: fx.dimension, values: ["EU"] },
    derived_agent_references: { agent_id: fx.agent },
    tags: { key: "region", value: "EU" },
  })[field]

const resolve = (schema: any): any => {
  if (schema?.$ref !== undefined)
    return resolve(description.doc.components.schemas[schema.$ref.split("/").pop()])
  return schema
}

const requestSchema = (o: Operation, type: string) => resolve(o.op.requestBody?.content?.[type]?.schema)

const isFileField = (schema: any): boolean => {
  const s = resolve(schema)
  return s?.format === "binary" || (s?.type === "array" && isFileField(s.items)) || s?.$ref?.includes("File")
}

/** The body fields of the operation: every property, and one level into arrays of objects and into maps. */
const fieldPaths = (schema: any): Array<ReadonlyArray<string | number>> => {
  const paths: Array<ReadonlyArray<string | number>> = []
  for (const [name, property] of Object.entries((schema?.properties ?? {}) as Record<string, any>)) {
    if (isFileField(property)) continue
    paths.push([name])
    const variants = [resolve(property), ...((resolve(property)?.anyOf ?? []) as Array<any>).map(resolve)]
    const array = variants.find((v) => v?.type === "array" && resolve(v.items)?.properties !== undefined)
    if (array !== undefined && validItem(name) !== undefined)
      for (const sub of Object.keys(resolve(array.items).properties)) paths.push([name, 0, sub])
    const map = variants.find((v) => v?.type === "object" && v.additionalProperties?.type === "string")
    if (map !== undefined) paths.push([name, "X-Hostile"])
  }
  return paths
}

/** The valid body with the value at `path` replaced. */
const withValue = (body: Record<string, unknown>, path: ReadonlyArray<string | number>, value: unknown) => {
  const [field, index, sub] = path as [string, string | number | undefined, string | undefined]
  if (index === undefined) return { ...body, [field]: value }
  if (typeof index === "number") return { ...body, [field]: [{ ...validItem(field), [sub!]: value }] }
  return { ...body, [field]: { [index]: value } }
}

/** A form value: strings as they are, anything else as JSON text (as the API reads form fields). */
const formValue = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v))

const urlEncoded = (fields: Record<string, unknown>) =>
  Object.entries(fields)
    .map(([k, v]) => `${encode(k)}=${encode(formValue(v))}`)
    .join("&")

const BOUNDARY = "hostile-boundary-7MA4YWxkTrZu0gW"

interface FilePart {
  readonly field: string
  readonly name: string
  readonly bytes: Uint8Array
}

/** A multipart body, written by hand so that any bytes (even invalid UTF-8) can be sent. */
const multipart = (fields: Record<string, unknown>, files: ReadonlyArray<FilePart> = [], close = true) => {
  const parts: Array<Buffer> = []
  for (const [k, v] of Object.entries(fields))
    parts.push(
      Buffer.concat([
        Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="`),
        bytesOf(k),
        Buffer.from('"\r\n\r\n'),
        bytesOf(formValue(v)),
        Buffer.from("\r\n"),
      ]),
    )
  for (const f of files)
    parts.push(
      Buffer.concat([
        Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${f.field}"; filename="`),
        bytesOf(f.name),
        Buffer.from('"\r\nContent-Type: application/pdf\r\n\r\n'),
        Buffer.from(f.bytes),
        Buffer.from("\r\n"),
      ]),
    )
  if (close) parts.push(Buffer.from(`--${BOUNDARY}--\r\n`))
  return Buffer.concat(parts)
}
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`

/** The file field of an upload operation. */
const fileField = (o: Operation) => (o.operationId === "outputSchema.extract" ? "files" : "file")
const pdf = onePagePdf("hostile input")

// ---------------------------------------------------------------------------------------------------
// Sending and judging

/** What is wrong with an answer, by the description's own account (empty: nothing). */
const run = (name: string, cases: ReadonlyArray<Case>) =>
  runCases({ raw, description, concurrency: CONCURRENCY }, name, cases)

const stillHealthy = async () => {
  const r = await a.get("/projects/")
  expect(r.status).toBe(200)
}

// ---------------------------------------------------------------------------------------------------
// The classes of hostile input

/** The body an operation's other cases carry: its valid JSON body, or its valid multipart upload. */
const validRequestBody = (o: Operation): { body?: Buffer; contentType?: string } => {
  if (o.op.requestBody === undefined) return {}
  if (UPLOADS.has(o.operationId))
    return {
      body: multipart(validBody(o), [{ field: fileField(o), name: "hostile.pdf", bytes: pdf }]),
      contentType: MULTIPART,
    }
  return { body: Buffer.from(JSON.stringify(validBody(o))), contentType: "application/json" }
}

const request = (
  o: Operation,
  path: string,
  body?: Buffer | string,
  contentType?: string,
  extra: Record<string, string> = {},
): RawRequest => ({
  method: o.method,
  path,
  headers: {
    ...authHeaders(o),
    ...(contentType === undefined ? {} : { "content-type": contentType }),
    ...extra,
  },
  ...(body === undefined ? {} : { body }),
})

const pathCases = (): Array<Case> =>
  operations().flatMap((o) =>
    pathParameters(o).flatMap((name) => {
      const values: Array<readonly [string, string]> = [
        ...STRINGS.map(([label, v]) => [label, encode(v)] as const),
        ["raw path traversal", "../../etc/passwd"],
        ["bad percent-escapes", BAD_ESCAPES],
      ]
      return values.map(([label, encoded]) => ({
        operation: o,
        input: `path ${name} = ${label}`,
        request: () => {
          const { body, contentType } = validRequestBody(o)
          return request(o, target(o, { [name]: encoded }), body, contentType)
        },
      }))
    }),
  )

const queryCases = (): Array<Case> =>
  operations().flatMap((o) =>
    queryParameters(o).flatMap((name) =>
      [
        ...STRINGS.map(([label, v]) => [label, encode(v)] as const),
        ["bad percent-escapes", BAD_ESCAPES] as const,
      ].map(([label, encoded]) => ({
        operation: o,
        input: `query ${name} = ${label}`,
        request: () => {
          const query = {
            ...Object.fromEntries(Object.entries(baseQuery(o)).map(([k, v]) => [k, encode(v)])),
            [name]: encoded,
          }
          return request(
            o,
            target(
              o,
              {},
              Object.entries(query)
                .map(([k, value]) => `${k}=${value}`)
                .join("&"),
            ),
          )
        },
      })),
    ),
  )

const bodyOperations = () => operations().filter((o) => o.op.requestBody !== undefined)

const jsonFieldCases = (): Array<Case> =>
  bodyOperations()
    .filter((o) => requestSchema(o, "application/json") !== undefined)
    .flatMap((o) =>
      fieldPaths(requestSchema(o, "application/json")).flatMap((path) =>
        VALUES.map(([label, v]) => ({
          operation: o,
          input: `JSON ${path.join("/")} = ${label}`,
          request: () =>
            request(o, target(o), JSON.stringify(withValue(validBody(o), path, v)), "application/json"),
        })),
      ),
    )

const formFieldCases = (): Array<Case> =>
  bodyOperations()
    .filter((o) => requestSchema(o, "application/x-www-form-urlencoded") !== undefined)
    .flatMap((o) =>
      fieldPaths(requestSchema(o, "application/x-www-form-urlencoded"))
        .filter((path) => path.length === 1)
        .flatMap((path) =>
          FORM_VALUES.map(([label, v]) => ({
            operation: o,
            input: `form ${path[0]} = ${label}`,
            request: () =>
              request(
                o,
                target(o),
                urlEncoded({ ...validBody(o), [path[0]!]: v }),
                "application/x-www-form-urlencoded",
              ),
          })),
        ),
    )

const multipartFieldCases = (): Array<Case> =>
  bodyOperations()
    .filter((o) => requestSchema(o, "multipart/form-data") !== undefined)
    .flatMap((o) =>
      fieldPaths(requestSchema(o, "multipart/form-data"))
        .filter((path) => path.length === 1)
        .flatMap((path) =>
          FORM_VALUES.map(([label, v]) => ({
            operation: o,
            input: `multipart ${path[0]} = ${label}`,
            request: () =>
              request(
                o,
                target(o),
                multipart(
                  { ...validBody(o), [path[0]!]: v },
                  UPLOADS.has(o.operationId)
                    ? [{ field: fileField(o), name: "hostile.pdf", bytes: pdf }]
                    : [],
                ),
                MULTIPART,
              ),
          })),
        ),
    )

const truncatedMultipart = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\nTruncated\r\n--${BOUNDARY}\r\nContent-Dispo`
const unclosedMultipart = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\nUnclosed\r\n`

const bodyShapeCases = (): Array<Case> =>
  bodyOperations()
    .filter((o) => !UPLOADS.has(o.operationId))
    .flatMap((o) => {
      const valid = () => JSON.stringify(validBody(o))
      const shapes: Array<readonly [string, () => string | Buffer, string | undefined]> = [
        ["10,000-deep JSON", () => deepJson(10_000), "application/json"],
        [
          "10,000-deep JSON in a field",
          () => `{"name":"x","schema":${deepJson(10_000)}}`,
          "application/json",
        ],
        ["malformed JSON", () => '{"name": "x",', "application/json"],
        ["NaN in JSON", () => '{"value": NaN}', "application/json"],
        ["empty body", () => "", "application/json"],
        ["JSON null", () => "null", "application/json"],
        ["JSON array", () => "[]", "application/json"],
        ["JSON string", () => '"x"', "application/json"],
        [
          "body over 1 MB",
          () => JSON.stringify({ ...validBody(o), description: "x".repeat(MB) }),
          "application/json",
        ],
        ["no Content-Type", valid, undefined],
        ["text/plain", valid, "text/plain"],
        ["application/xml", () => "<project><name>x</name></project>", "application/xml"],
        ["multipart without a boundary", () => truncatedMultipart, "multipart/form-data"],
        ["truncated multipart", () => truncatedMultipart, MULTIPART],
        ["multipart without its closing boundary", () => unclosedMultipart, MULTIPART],
        ["malformed form escape", () => "name=%ZZ&description=%E0%A4%A", "application/x-www-form-urlencoded"],
        [
          "10,000-deep form value",
          () => `schema=${encodeURIComponent(deepJson(10_000))}`,
          "application/x-www-form-urlencoded",
        ],
      ]
      return shapes.map(([label, body, contentType]) => ({
        operation: o,
        input: `body ${label}`,
        request: () => request(o, target(o), body(), contentType),
      }))
    })

const FILE_NAMES: ReadonlyArray<readonly [string, string]> = [
  ["file name .", "."],
  ["file name ..", ".."],
  ["empty file name", ""],
  ["file name 文件.pdf", "文件.pdf"],
  ["file name ../x.pdf", "../x.pdf"],
  ["file name with NUL", "a\u0000.pdf"],
  ["file name with a lone surrogate", "a\uD800.pdf"],
  ["201-character file name", `${"n".repeat(197)}.pdf`],
]

const uploadCases = (): Array<Case> =>
  operations()
    .filter((o) => UPLOADS.has(o.operationId))
    .flatMap((o) => {
      const fields = validBody(o)
      const file = (name: string) => [{ field: fileField(o), name, bytes: pdf }]
      const shapes: Array<readonly [string, () => Buffer | string, string | undefined]> = [
        ...FILE_NAMES.map(
          ([label, name]) => [label, () => multipart(fields, file(name)), MULTIPART] as const,
        ),
        ["body missing its closing boundary", () => multipart(fields, file("x.pdf"), false), MULTIPART],
        [
          "body cut inside the file",
          () => multipart(fields, file("x.pdf")).subarray(0, 200 + pdf.length / 2),
          MULTIPART,
        ],
        ["multipart without a boundary", () => multipart(fields, file("x.pdf")), "multipart/form-data"],
        ["no file part", () => multipart(fields), MULTIPART],
        ["empty body", () => "", MULTIPART],
        ["JSON instead of multipart", () => JSON.stringify(fields), "application/json"],
      ]
      return shapes.map(([label, body, contentType]) => ({
        operation: o,
        input: `upload ${label}`,
        request: () => request(o, target(o), body(), contentType),
      }))
    })

const classes: ReadonlyArray<readonly [string, () => Array<Case>]> = [
  ["path parameters", pathCases],
  ["query parameters", queryCases],
  ["JSON body fields", jsonFieldCases],
  ["form body fields", formFieldCases],
  ["multipart body fields", multipartFieldCases],
  ["body shapes", bodyShapeCases],
  ["uploads", uploadCases],
]

describe("hostile input against every operation of the OpenAPI description", () => {
  it("has the fixtures and a description that compiles", () => {
    expect(description.loadError).toBeUndefined()
    expect(operations().length).toBeGreaterThan(40)
  })

  for (const [name, make] of classes) {
    it(`${name}: answered within 10 s, no 5xx, problem+json 4xx, as documented`, async () => {
      const cases = make()
      expect(cases.length).toBeGreaterThan(0)
      expectNoFailures(await run(name, cases), cases.length)
    }, 120_000)

    it(`${name}: the server still answers afterwards`, stillHealthy)
  }
})
