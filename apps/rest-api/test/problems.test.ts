import { type Client, createProject, expectProblem } from "@dxs/testing/RestClient"
import { beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
let a: Client

beforeAll(async () => {
  api = await startTestApi()
  a = api.client(await api.newKey("acme"))
})

describe("validation problems", () => {
  it("say once per field what is wrong, in words", async () => {
    const p = await createProject(a)
    const wrongType = await a.post(`/projects/${p}/agents/`, { name: "x", value_type: "text" })
    expectProblem(wrongType, 400)
    expect(wrongType.body.errors).toEqual([
      { path: "value_type", message: 'must be one of string, number, bool, date, datetime (got "text")' },
    ])
    const missing = await a.post(`/projects/${p}/agents/`, { examples: "x" })
    expectProblem(missing, 400)
    expect(missing.body.errors).toEqual([{ path: "name", message: "is missing" }])
    expect(missing.body.detail).toBe("Invalid request: name: is missing")
    // An agent has no description: a member the body does not declare is named as well.
    const unknown = await a.post(`/projects/${p}/agents/`, { description: "x" })
    expectProblem(unknown, 400)
    expect(unknown.body.errors).toEqual(
      expect.arrayContaining([
        { path: "name", message: "is missing" },
        { path: "description", message: expect.stringContaining("is not a member of this body") },
      ]),
    )
  })
})
