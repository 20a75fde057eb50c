import { describe, expect, it } from "vitest"
import { jsonPageBytes } from "../src/Paging.ts"
import { gridPageBytes } from "../src/ResultsGrid.ts"
import { filledSlots } from "../src/results/Lists.ts"

// A results list's text as the database builds it: each row's extraction status is a slot naming its agent.
const agentA = "0b8f8a52-6d53-4a84-9a53-6f1f2f9c1a01"
const agentB = "5c1d7e22-98f4-4c3e-b1a2-0d9e8f7a6b02"
const row = (agent: string, name: string) =>
  `{"agent_id":"${agent}","result_name":${JSON.stringify(name)},"extraction_status":"\\u0001${agent}","resolution_result":{"value":"x"}}`
const rows = [
  row(agentA, "Zürich — 北京 😀"),
  row(agentB, "plain"),
  row(agentA, 'quote " and \\u0001 in a name'),
]
const databaseText = `[${rows.join(",")}]`

describe("a page's JSON in pieces", () => {
  it("puts each row's status in its slot, and only there", () => {
    const pieces = filledSlots(databaseText, (agent) => (agent === agentA ? "Processed" : "Pending"))
    const parsed = JSON.parse(pieces.join("")) as Array<{ extraction_status: string; result_name: string }>
    expect(parsed.map((r) => r.extraction_status)).toEqual(["Processed", "Pending", "Processed"])
    expect(parsed.map((r) => r.result_name)).toEqual([
      "Zürich — 北京 😀",
      "plain",
      'quote " and \\u0001 in a name',
    ])
  })

  it("leaves a text without slots as it is", () => {
    expect(filledSlots("[]", () => "Processed").join("")).toBe("[]")
  })

  it("encodes the envelope and the pieces as UTF-8, byte for byte what the joined text encodes to", () => {
    const resultsJson = filledSlots(databaseText, () => "Processed")
    const page = { count: 3, next: "?limit=2&cursor=abc", previous: null, resultsJson }
    const bytes = jsonPageBytes(page)
    const expected = Buffer.from(
      `{"count":3,"next":"?limit=2&cursor=abc","previous":null,"results":${resultsJson.join("")}}`,
    )
    expect(bytes.equals(expected)).toBe(true)
    expect(JSON.parse(bytes.toString("utf8")).results).toHaveLength(3)
  })

  it("encodes a grid page with its columns, byte for byte", () => {
    const page = {
      count: 1,
      next: null,
      previous: "?offset=0",
      columns: [{ agent_id: agentA, agent_name: "Größe", value_type: "number" as const, unit: "m²" }],
      rowsJson: ['{"row_name":"Ünïcode 😀"}', '{"row_name":"b\\u0001"}'],
    }
    const text = `{"count":1,"next":null,"previous":"?offset=0","columns":${JSON.stringify(page.columns)},"rows":[${page.rowsJson.join(",")}]}`
    expect(gridPageBytes(page).equals(Buffer.from(text))).toBe(true)
    expect(JSON.parse(text).rows).toEqual([{ row_name: "Ünïcode 😀" }, { row_name: "b\u0001" }])
    expect(gridPageBytes({ ...page, rowsJson: [] }).toString("utf8")).toBe(
      `{"count":1,"next":null,"previous":"?offset=0","columns":${JSON.stringify(page.columns)},"rows":[]}`,
    )
  })
})
