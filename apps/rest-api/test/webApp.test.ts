/**
 * Serving the built web application beside the API: files with their types and caching, the
 * application's index.html for its own routes (deep links), nothing outside the directory, and API paths
 * that no endpoint takes still 404 problem+json.
 */
import { promises as fs } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterThisFile } from "@dxs/testing/FileCleanup"
import { expectProblem } from "@dxs/testing/RestClient"
import { beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
const INDEX = "<!doctype html><title>app</title><div id=root></div>"

beforeAll(async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "dxs-webapp-"))
  // A file beside the application's folder, which no path may reach.
  const secret = path.join(path.dirname(dir), "dxs-secret.txt")
  afterThisFile(() =>
    Promise.all([fs.rm(dir, { recursive: true, force: true }), fs.rm(secret, { force: true })]),
  )
  await fs.mkdir(path.join(dir, "assets"))
  await fs.writeFile(path.join(dir, "index.html"), INDEX)
  await fs.writeFile(path.join(dir, "assets", "app-1234.js"), "console.log('app')")
  await fs.writeFile(secret, "secret")
  api = await startTestApi({ webApp: dir })
})

const get = (p: string) => fetch(api.origin + p)

describe("the web application's files", () => {
  it("serves index.html at the root and for the application's routes, with a content security policy", async () => {
    for (const p of ["/", "/projects/0b7e6a52-4c51-4a43-9d73-1a5b0d0f0a11/agents/x/y", "/developer"]) {
      const r = await get(p)
      expect(r.status, p).toBe(200)
      expect(r.headers.get("content-type")).toContain("text/html")
      expect(r.headers.get("content-security-policy")).toContain("default-src 'self'")
      expect(r.headers.get("cache-control")).toBe("no-cache")
      expect(await r.text()).toBe(INDEX)
    }
  })

  it("serves hashed assets with their type, cached for a year", async () => {
    const r = await get("/assets/app-1234.js")
    expect(r.status).toBe(200)
    expect(r.headers.get("content-type")).toContain("text/javascript")
    expect(r.headers.get("cache-control")).toContain("immutable")
    expect(await r.text()).toBe("console.log('app')")
  })

  it("never serves a file outside its directory", async () => {
    for (const p of ["/../dxs-secret.txt", "/%2e%2e/dxs-secret.txt", "/assets/../../dxs-secret.txt"]) {
      const r = await get(p)
      expect(await r.text(), p).not.toContain("secret")
    }
  })

  it("leaves unknown API paths to 404 problem+json, and the API working", async () => {
    const r = await get("/api/v1/no-such-thing/")
    expectProblem({ status: r.status, headers: r.headers, body: await r.json() }, 404)
    expect((await get("/api/v1/schema/?format=json")).status).toBe(200)
  })
})
