import { compileErrors, validate } from "@readme/openapi-parser"
import { beforeAll, describe, expect, it } from "vitest"
import { parse as parseYaml } from "yaml"
import { openApiDocument } from "../src/index.ts"
import { compileDescription, idsOf } from "./description.ts"
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
      // File uploads (a new document, a replacement file, one-call extraction) are multipart only.
      const isUpload =
        (method === "post" && /\/documents\/$/.test(path)) ||
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
  })
})
