/**
 * Documents read as structure through GraphQL over HTTP: `Page.tables` and `Document.content(format)` answer
 * what REST's page and content endpoints answer.
 */

import type { TestApi } from "@dxs/rest-api/TestApi"
import { type Client, createProject } from "@dxs/testing/RestClient"
import { waitProcessed } from "@dxs/testing/Runs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Gateway, graphqlOn, ok, startGateway, upload } from "./support.ts"

let gql: Gateway
let api: TestApi
let key: string
let a: Client

const graphql = graphqlOn(() => gql)

beforeAll(async () => {
  gql = await startGateway({ worker: {} })
  api = gql.api
  key = await api.newKey("content")
  a = api.client(key)
})

afterAll(async () => {
  await gql?.close()
})

const html = `<html><body><h1>Rates</h1>
<table><tr><th>Currency</th><th>Rate</th></tr><tr><td>EUR</td><td>1.00</td></tr><tr><td>USD</td><td>1.08</td></tr></table>
</body></html>`

const QUERY = `query ($id: ID!) {
  project(id: $id) {
    documents {
      content
      json: content(format: JSON)
      text: content(format: TEXT)
      pages { page_number tables { bbox rows continued cells } }
    }
  }
}`

describe("tables and content", () => {
  it("answers Page.tables and Document.content as REST's page and content endpoints do", async () => {
    const projectId = await createProject(a)
    const id = await upload(a, projectId, "rates.html", new TextEncoder().encode(html))
    await waitProcessed(a, projectId)
    const [document] = ok(await graphql(key, QUERY, { id: projectId })).project.documents
    const page = await a.get(`/projects/${projectId}/documents/${id}/pages/1/`)
    expect(document.pages[0].tables).toEqual(page.body.tables)
    expect(document.pages[0].tables[0].rows).toEqual([
      ["Currency", "Rate"],
      ["EUR", "1.00"],
      ["USD", "1.08"],
    ])
    const rest = (format: string) => a.get(`/projects/${projectId}/documents/${id}/content/?format=${format}`)
    expect(document.content).toBe((await rest("markdown")).text)
    expect(document.content).toContain("# Rates\n\n| Currency | Rate |")
    expect(JSON.parse(document.json)).toEqual((await rest("json")).body)
    expect(document.text).toBe((await rest("text")).text)
  })
})
