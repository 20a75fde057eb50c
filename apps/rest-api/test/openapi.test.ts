import { randomUUID } from "node:crypto"
import { EXTRACT_MAX_FILES } from "@dxs/services"
import { fetchFrom } from "@dxs/testing/RestClient"
import { compileErrors, validate } from "@readme/openapi-parser"
import { beforeAll, describe, expect, it } from "vitest"
import { parse as parseYaml } from "yaml"
import { openApiDocument } from "../src/index.ts"
import { compileDescription, idsOf, operationsOf } from "./description.ts"
import { startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
beforeAll(async () => {
  api = await startTestApi()
})

const httpMethods = ["get", "post", "put", "patch", "delete"] as const

describe("OpenAPI description", () => {
  it("is served without a key as YAML by default and JSON with ?format=json, and both agree", async () => {
    const anonymous = api.client(undefined)
    const yaml = await anonymous.get("/schema/")
    expect(yaml.status).toBe(200)
    expect(yaml.headers.get("content-type")).toContain("yaml")
    const json = await anonymous.get("/schema/?format=json")
    expect(json.status).toBe(200)
    expect(json.headers.get("content-type")).toContain("application/json")
    expect(parseYaml(yaml.text)).toEqual(json.body)
    expect(json.body.openapi).toMatch(/^3\.1/)
  })

  it("is a valid OpenAPI 3.1 document", async () => {
    const doc = structuredClone(openApiDocument()) as any
    const result = await validate(doc)
    expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true)
  })

  it("compiles with Ajv (Draft 2020-12, strict): every schema, every reference, no identifier used twice", () => {
    const doc = openApiDocument() as any
    const shared = [...idsOf(doc)].filter(([, n]) => n > 1)
    expect(shared, "identifiers shared by several schemas").toEqual([])
    const description = compileDescription(doc)
    expect(description.loadError).toBeUndefined()
    expect(description.schemas.length).toBeGreaterThan(100)
    const failed = description.schemas.filter((s) => s.error !== undefined).map((s) => `${s.at}: ${s.error}`)
    expect(failed).toEqual([])
  })

  it("declares what the description itself is served as: YAML by default, JSON with ?format=json", () => {
    const op = (openApiDocument() as any).paths["/api/v1/schema/"].get
    const content = op.responses["200"].content
    expect(Object.keys(content).sort()).toEqual(["application/json", "application/yaml"])
    expect(content["application/yaml"].schema).toMatchObject({ type: "string" })
    expect(content["application/json"].schema).toMatchObject({ type: "object" })
  })

  it("declares downloads as the file's own bytes, whatever its type", () => {
    const paths = (openApiDocument() as any).paths
    for (const p of [
      "/api/v1/projects/{project_id}/documents/{document_id}/file/",
      "/api/v1/files/{document_id}",
    ]) {
      const content = paths[p].get.responses["200"].content
      expect(Object.keys(content), p).toEqual(["*/*"])
      expect(content["*/*"].schema, p).toMatchObject({ type: "string", format: "binary" })
    }
  })

  it("describes a document's content as Markdown, JSON or text, and a page's tables as cells", () => {
    const doc = openApiDocument() as any
    const op = doc.paths["/api/v1/projects/{project_id}/documents/{document_id}/content/"].get
    const format = op.parameters.find((p: any) => p.name === "format")
    expect(format.in).toBe("query")
    expect(format.schema.enum).toEqual(["markdown", "json", "text"])
    // Markdown, JSON or text by `format`: the answer is described as any media type, as it is sent.
    expect(Object.keys(op.responses["200"].content)).toEqual(["*/*"])
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["400", "401", "404"]))
    const page = doc.components.schemas.V1DocumentPage
    expect(page.required).toContain("tables")
    const table = doc.components.schemas.V1PageTable
    expect(table.required).toEqual(["bbox", "rows", "cells", "continued"])
    const cell = doc.components.schemas.V1TableCell
    expect(Object.keys(cell.properties)).toEqual([
      "row",
      "column",
      "row_span",
      "column_span",
      "text",
      "header",
      "bbox",
    ])
  })

  it("documents every operation with its errors as problem+json, and the API key scheme", () => {
    const doc = openApiDocument() as any
    expect(doc.components.securitySchemes.ApiKeyAuth).toEqual({
      type: "apiKey",
      name: "X-API-Key",
      in: "header",
    })
    const operations = Object.entries(doc.paths as Record<string, any>).flatMap(([p, item]) =>
      httpMethods.filter((m) => item[m]).map((m) => ({ path: p, method: m, op: item[m] })),
    )
    expect(operations.length).toBeGreaterThan(10)
    for (const { path, method, op } of operations) {
      expect(path.startsWith("/api/v1/"), path).toBe(true)
      // Limits every request meets before its operation: headers, and the body's size.
      expect(Object.keys(op.responses), `${method} ${path}`).toContain("431")
      if (op.requestBody) expect(Object.keys(op.responses), `${method} ${path}`).toContain("413")
      if (path === "/api/v1/schema/") continue
      // A signed download link authorises itself: no key, but the signature is required.
      if (path.startsWith("/api/v1/files/")) {
        expect(op.parameters.map((p: any) => p.name)).toEqual(
          expect.arrayContaining(["expires", "signature"]),
        )
        continue
      }
      // Signing in and out is open; everything else takes an API key or a member's session.
      if (path === "/api/v1/auth/sign-in/" || path === "/api/v1/auth/sign-out/") {
        expect(op.security ?? [], `${method} ${path} security`).toEqual([])
        continue
      }
      expect(op.security, `${method} ${path} security`).toEqual([{ ApiKeyAuth: [] }, { SessionAuth: [] }])
      const errorCodes = Object.keys(op.responses).filter((c) => Number(c) >= 400)
      expect(errorCodes, `${method} ${path} errors`).toEqual(expect.arrayContaining(["400", "401"]))
      for (const code of errorCodes) {
        expect(Object.keys(op.responses[code].content ?? {}), `${method} ${path} ${code}`).toContain(
          "application/problem+json",
        )
      }
      // File uploads (a new document, a replacement file, one-call extraction, a template) are multipart only.
      const isUpload =
        (method === "post" && /\/documents\/$/.test(path)) ||
        (method === "post" && /\/file-edit\/$/.test(path)) ||
        (method === "put" && /\/file\/$/.test(path)) ||
        (method === "post" && path === "/api/v1/extract/")
      if (op.requestBody && !isUpload) {
        const types = Object.keys(op.requestBody.content)
        expect(types, `${method} ${path} body`).toEqual(
          expect.arrayContaining([
            "application/json",
            "application/x-www-form-urlencoded",
            "multipart/form-data",
          ]),
        )
        // Form fields are those of the JSON body (non-text values as JSON text).
        const json = op.requestBody.content["application/json"].schema
        expect(
          op.requestBody.content["application/x-www-form-urlencoded"].schema,
          `${method} ${path}`,
        ).toEqual(json)
        expect(op.requestBody.content["multipart/form-data"].schema, `${method} ${path}`).toEqual(json)
      }
    }
  })

  it("is served as a valid OpenAPI 3.1 document, with the server its paths are relative to", async () => {
    // A connection of its own: one kept alive through the slow tests above may be closed under it.
    const served = await fetchFrom("127.0.0.1", `${api.base}/schema/?format=json`)
    const result = await validate(structuredClone(served.body))
    expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true)
    // The paths carry /api/v1 themselves: the server is the origin the description comes from.
    expect(served.body.servers).toEqual([{ url: "/", description: expect.any(String) }])
    for (const path of Object.keys(served.body.paths)) expect(path.startsWith("/api/v1/"), path).toBe(true)
  })

  it("gives every operation of every tag a summary", () => {
    const doc = openApiDocument() as any
    const missing = operationsOf(doc)
      .filter(({ op }) => typeof op.summary !== "string" || op.summary.trim() === "")
      .map(({ method, path, op }) => `${op.tags?.join(",")}: ${method} ${path}`)
    expect(missing).toEqual([])
    const tags = new Set(operationsOf(doc).flatMap(({ op }) => op.tags as Array<string>))
    expect([...tags]).toEqual(expect.arrayContaining(["Folders", "Documents", "Results", "Webhooks"]))
  })

  it("describes whole-number parameters (limit, offset, page numbers, versions, expiry) as integers", () => {
    const parameters = operationsOf(openApiDocument()).flatMap(({ method, path, op }) =>
      ((op.parameters ?? []) as Array<any>).map((p) => ({ at: `${method} ${path} ${p.in} ${p.name}`, p })),
    )
    const named = (...names: Array<string>) => parameters.filter(({ p }) => names.includes(p.name))
    const paging = named("limit", "offset")
    // Results, extractions, relevant pages, webhook deliveries.
    expect(paging.length).toBeGreaterThanOrEqual(7)
    for (const { at, p } of paging) {
      expect(p.in, at).toBe("query")
      expect(p.schema.type, at).toBe("integer")
      expect(p.schema.minimum, at).toBe(p.name === "limit" ? 1 : 0)
      expect(p.schema.maximum, at).toEqual(expect.any(Number))
      expect(p.description, at).toEqual(expect.any(String))
    }
    const others = named("page_number", "version", "expires")
    expect(others.map(({ at }) => at.split(" ").slice(-2).join(" ")).sort()).toEqual([
      "path page_number",
      "path page_number",
      "query expires",
      "query version",
    ])
    for (const { at, p } of others) expect(p.schema.type, at).toBe("integer")
    // No parameter is left described by its text (the encoded side of a number decoded from a string).
    for (const { at, p } of parameters)
      expect(JSON.stringify(p.schema), at).not.toMatch(/decoded into a number/)
  })

  it("accepts exactly the range it describes for limit and offset", async () => {
    const key = await api.newKey(`openapi-${randomUUID()}`)
    const get = (url: string) =>
      fetchFrom("127.0.0.1", `${api.base}${url}`, { headers: { "x-api-key": key } })
    const doc = openApiDocument() as any
    const paged = operationsOf(doc).filter(
      ({ method, op }) => method === "get" && (op.parameters as Array<any>).some((p) => p.name === "limit"),
    )
    expect(paged.length).toBeGreaterThanOrEqual(4)
    for (const { path, op } of paged) {
      // Unknown ids: a query the server accepts gets as far as 404; one it refuses is a 400 naming it.
      const url = path
        .replace(/^\/api\/v1/, "")
        .replace(/\{(\w+)\}/g, (_, name: string) => (name === "run_number" ? "1" : randomUUID()))
      for (const p of (op.parameters as Array<any>).filter(
        (q) => q.name === "limit" || q.name === "offset",
      )) {
        const { minimum, maximum } = p.schema
        for (const inside of [minimum, maximum]) {
          const r = await get(`${url}?${p.name}=${inside}`)
          expect(r.status, `${path} ${p.name}=${inside}`).not.toBe(400)
        }
        for (const outside of [minimum - 1, maximum + 1]) {
          const r = await get(`${url}?${p.name}=${outside}`)
          expect(r.status, `${path} ${p.name}=${outside}`).toBe(400)
          expect(
            r.body.errors.map((e: any) => e.path),
            `${path} ${p.name}=${outside}`,
          ).toEqual([p.name])
        }
      }
    }
  })

  it("describes upload fields as binary files: one `file`, or 1 to 50 `files`", () => {
    const paths = (openApiDocument() as any).paths
    const form = (path: string, method: string) =>
      paths[path][method].requestBody.content["multipart/form-data"].schema
    for (const [path, method] of [
      ["/api/v1/projects/{project_id}/documents/", "post"],
      ["/api/v1/projects/{project_id}/documents/{document_id}/file/", "put"],
      ["/api/v1/projects/{project_id}/file-edit/", "post"],
    ] as const) {
      const schema = form(path, method)
      expect(schema.required, path).toContain("file")
      expect(schema.properties.file, path).toEqual({
        type: "string",
        format: "binary",
        description: expect.any(String),
      })
    }
    const extract = form("/api/v1/extract/", "post")
    expect(extract.required).toContain("files")
    expect(extract.properties.files).toEqual({
      type: "array",
      items: { type: "string", format: "binary" },
      minItems: 1,
      maxItems: EXTRACT_MAX_FILES,
      description: expect.any(String),
    })
  })

  it("has no schema titled after an Effect filter (itemsCount(1), minLength(1), …)", () => {
    const titles: Array<string> = []
    const walk = (value: unknown, at: string): void => {
      if (value === null || typeof value !== "object") return
      for (const [k, v] of Object.entries(value)) {
        if (k === "title" && typeof v === "string" && /^\w+\(.*\)$/.test(v)) titles.push(`${at}: ${v}`)
        walk(v, `${at}/${k}`)
      }
    }
    walk(openApiDocument(), "")
    expect(titles).toEqual([])
  })

  it("names the spec's paths", () => {
    const paths = Object.keys((openApiDocument() as any).paths)
    for (const p of [
      "/api/v1/projects/",
      "/api/v1/projects/{id}/",
      "/api/v1/projects/{id}/status/",
      "/api/v1/projects/{project_id}/schema/",
      "/api/v1/projects/{project_id}/results/schema/",
      "/api/v1/extract/",
    ]) {
      expect(paths).toContain(p)
    }
  })
})

describe("docs page", () => {
  it("is served without a key and loads nothing from a CDN", async () => {
    const res = await fetch(api.base.replace(/\/api\/v1$/, "/api/v1/docs"))
    expect(res.status).toBe(200)
    const html = await res.text()
    expect(html).toContain("<html")
    expect(html).not.toMatch(/<script[^>]+src=["']https?:/i)
    expect(html).not.toMatch(/<link[^>]+href=["']https?:/i)
    // The description it shows is the API's own, and Scalar's script is inline.
    const embedded = /<script id="api-reference" type="application\/json">([\s\S]*?)<\/script>/.exec(html)
    expect(embedded).not.toBeNull()
    const served = (await fetch(`${api.base}/schema/?format=json`).then((r) => r.json())) as { paths: object }
    expect(Object.keys(JSON.parse(embedded![1]!).paths)).toEqual(Object.keys(served.paths))
    expect(html).toContain("@scalar/api-reference")
    // Asked again, the same page.
    expect(await fetch(api.base.replace(/\/api\/v1$/, "/api/v1/docs")).then((r) => r.text())).toBe(html)
  })
})
