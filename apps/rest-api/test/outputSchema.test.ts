/**
 * Output schemas through the REST API: PUT/GET schema rules, mapping diagnostics (422 for errors,
 * warnings saved), automatic mapping in the background, results in the schema's shape (checked with Ajv
 * against the target schema), `enrich`, and the one-call `POST /extract/`.
 */
import { makeKysely } from "@dxs/db"
import { claim, complete } from "@dxs/db/TaskQueue"
import { localModel } from "@dxs/pipeline/llm/Local"
import { failAbandonedMappings, makeAjv, OUTPUT_MAPPING_TASK, outputMappingTaskHandler } from "@dxs/services"
import { invoice, textPdf } from "@dxs/testing/Documents"
import { type Client, createProject, expectProblem, timestamp } from "@dxs/testing/RestClient"
import { createAgent, launchAndWait, until, upload, waitProcessed } from "@dxs/testing/Runs"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
let a: Client
let idle: TestApi
let b: Client

beforeAll(async () => {
  ;[api, idle] = await Promise.all([startTestApi({ worker: {} }), startTestApi()])
  a = api.client(await api.newKey("acme"))
  b = idle.client(await idle.newKey("acme"))
})

afterAll(async () => {})

/** Asserts that `value` validates against `schema` (Ajv, Draft 2020-12, formats). */
const expectValid = (schema: unknown, value: unknown) => {
  const validate = makeAjv().compile(schema as object)
  const ok = validate(value)
  expect(validate.errors ?? [], JSON.stringify(value)).toEqual([])
  expect(ok).toBe(true)
}

const UNSATISFIED = "urn:dxs:problem:schema-unsatisfied"

/**
 * GET results/schema (`?enrich=true` with `enrich`). Every 200 body must validate against `schema`; the only
 * exception is the documented one: an enriched answer with `_missing` when the plain answer is refused with
 * 422 `schema-unsatisfied` (the results cannot fill the schema).
 */
const schemaResults = async (
  client: Client,
  projectId: string,
  schema: unknown,
  options: { readonly enrich?: boolean } = {},
) => {
  const path = `/projects/${projectId}/results/schema/`
  const r = await client.get(options.enrich ? `${path}?enrich=true` : path)
  if (r.status !== 200) return r
  const validate = makeAjv().compile(schema as object)
  if (!validate(r.body)) {
    expect(
      options.enrich === true && Array.isArray(r.body._missing) && r.body._missing.length > 0,
      `an invalid answer that does not say so: ${JSON.stringify(validate.errors)} in ${JSON.stringify(r.body)}`,
    ).toBe(true)
    const plain = await client.get(path)
    expectProblem(plain, 422)
    expect(plain.body.type).toBe(UNSATISFIED)
  }
  return r
}

const invoiceA = () =>
  invoice({
    number: "INV-1001",
    date: "March 3, 2024",
    seller: "Acme Supplies Inc.",
    currency: "USD",
    subtotal: "$1,000.00",
    tax: "$200.00",
    total: "$1,200.00",
  })

const regionalReport = () =>
  textPdf([
    ["Quarterly report", "", "Revenue EU: 1,200", "Revenue US: 3,400", "Revenue APAC: 560"].join("\n"),
  ])

/** Waits until the project's mapping is no longer pending; returns its schema record. */
const mappingSettled = (projectId: string) =>
  until("the mapping", async () => {
    const s = await a.get(`/projects/${projectId}/schema/`)
    return s.body.status === "pending" ? undefined : s.body
  })

/** Waits until the project at `statusPath` runs no pipeline and its mapping succeeded; returns the status. */
const extractionDone = (statusPath: string) =>
  until(
    "the extraction",
    async () => {
      const s = await a.get(statusPath)
      return !s.body.pipeline_running && s.body.schema_status === "success" ? s.body : undefined
    },
    90_000,
  )

const INVOICE_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: {
    invoice_number: { type: "string", description: "The invoice number" },
    total_due: { type: "number", description: "The total amount due on the invoice" },
    currency: { type: "string", enum: ["USD", "EUR", "GBP"], description: "The invoice currency" },
  },
  required: ["invoice_number", "total_due"],
  additionalProperties: false,
}

describe("PUT and GET schema", () => {
  let projectId: string

  beforeAll(async () => {
    projectId = await createProject(a)
  })

  it("answers 404 while the project has no schema, and the project shows none", async () => {
    expectProblem(await a.get(`/projects/${projectId}/schema/`), 404)
    const project = await a.get(`/projects/${projectId}/`)
    expect(project.body).toMatchObject({ target_output_schema: null, output_mapping_status: "none" })
    expectProblem(await a.get(`/projects/${projectId}/results/schema/`), 400)
  })

  it.each([
    ["a type that does not exist", { type: "objekt" }, "schema/type"],
    ["a root that is not an object", { type: "array", items: { type: "string" } }, "schema"],
    ["another draft", { $schema: "http://json-schema.org/draft-07/schema#", type: "object" }, "schema"],
    [
      "a $ref that resolves nowhere",
      { type: "object", properties: { a: { $ref: "#/$defs/missing" } } },
      "schema",
    ],
    ["not an object", ["a"], "schema"],
  ])("refuses %s with 400 naming the schema", async (_what, schema, path) => {
    const r = await a.put(`/projects/${projectId}/schema/`, { schema, auto_map: false })
    expectProblem(r, 400)
    expect(r.body.errors.map((e: any) => e.path)).toContain(path)
    expectProblem(await a.get(`/projects/${projectId}/schema/`), 404)
  })

  it("requires auto_map and refuses a mapping beside auto_map true", async () => {
    expectProblem(await a.put(`/projects/${projectId}/schema/`, { schema: INVOICE_SCHEMA }), 400)
    const r = await a.put(`/projects/${projectId}/schema/`, {
      schema: INVOICE_SCHEMA,
      auto_map: true,
      mapping: { kind: "object", properties: {} },
    })
    expectProblem(r, 400)
    expect(r.body.errors).toEqual([{ path: "mapping", message: expect.stringContaining("auto_map") }])
  })

  it("stores a new schema without a mapping as pending, then refuses an omitted mapping for the same schema", async () => {
    const r = await a.put(`/projects/${projectId}/schema/`, { schema: INVOICE_SCHEMA, auto_map: false })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      schema: INVOICE_SCHEMA,
      auto_map: false,
      mapping: null,
      status: "pending",
      source: "manual",
      generated_by: null,
      error: null,
      generated_at: null,
      schema_in_sync: true,
      diagnostics: [],
    })
    const project = await a.get(`/projects/${projectId}/`)
    expect(project.body).toMatchObject({
      target_output_schema: INVOICE_SCHEMA,
      output_mapping_status: "pending",
    })
    const again = await a.put(`/projects/${projectId}/schema/`, { schema: INVOICE_SCHEMA, auto_map: false })
    expectProblem(again, 400)
    expect(again.body.errors[0].path).toBe("mapping")
    expectProblem(await a.get(`/projects/${projectId}/results/schema/`), 409)
  })

  it("refuses a mapping with errors (422 with every diagnostic) and saves nothing", async () => {
    await createAgent(a, projectId, { name: "Invoice number", extraction_instructions: "The invoice number" })
    const region = await a.post(`/projects/${projectId}/dimensions/`, { name: "Region" })
    await createAgent(a, projectId, {
      name: "Total",
      extraction_instructions: "Total due",
      value_type: "number",
      dimensions: [{ dimension_id: region.body.id, values: ["EU", "US"] }],
    })
    const r = await a.put(`/projects/${projectId}/schema/`, {
      schema: INVOICE_SCHEMA,
      auto_map: false,
      mapping: {
        kind: "object",
        properties: {
          invoice_number: { kind: "scalar_from_agent", agent_name: "Invoice No" },
          total_due: { kind: "scalar_from_agent", agent_name: "Total" },
          currency: { kind: "object", properties: {} },
          vat: { kind: "scalar_from_agent", agent_name: "Invoice number" },
        },
      },
    })
    expectProblem(r, 422)
    expect(r.body.diagnostics).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: "invoice_number", severity: "error", code: "agent_not_found" }),
        expect.objectContaining({ path: "total_due", severity: "error", code: "dimension_not_in_scope" }),
        expect.objectContaining({ path: "currency", severity: "error", code: "node_kind_mismatch" }),
        expect.objectContaining({ path: "vat", severity: "error", code: "property_not_in_schema" }),
      ]),
    )
    const stored = await a.get(`/projects/${projectId}/schema/`)
    expect(stored.body).toMatchObject({ mapping: null, status: "pending" })
  })

  it("saves a mapping with warnings, reports them, and marks it out of sync when the schema changes", async () => {
    const mapping = {
      kind: "object",
      properties: {
        invoice_number: { kind: "scalar_from_agent", agent_name: "Invoice number" },
        total_due: { kind: "scalar_from_agent", agent_name: "Total", dimension_values: { Region: "APAC" } },
      },
    }
    const r = await a.put(`/projects/${projectId}/schema/`, {
      schema: INVOICE_SCHEMA,
      auto_map: false,
      mapping,
    })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      mapping,
      status: "success",
      source: "manual",
      generated_by: null,
      error: null,
      generated_at: timestamp,
      schema_in_sync: true,
    })
    expect(r.body.diagnostics).toEqual([
      expect.objectContaining({ path: "total_due", severity: "warning", code: "dimension_value_unknown" }),
    ])
    expect((await a.get(`/projects/${projectId}/status/`)).body.schema_status).toBe("success")

    const changed = { ...INVOICE_SCHEMA, required: ["invoice_number", "total_due", "currency"] }
    const kept = await a.put(`/projects/${projectId}/schema/`, { schema: changed, auto_map: false })
    expect(kept.status).toBe(200)
    expect(kept.body).toMatchObject({ mapping, status: "success", schema_in_sync: false })
    expect(kept.body.diagnostics).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: "currency", severity: "warning", code: "required_unmapped" }),
      ]),
    )

    const cleared = await a.put(`/projects/${projectId}/schema/`, {
      schema: changed,
      auto_map: false,
      mapping: null,
    })
    expect(cleared.body).toMatchObject({
      mapping: null,
      status: "pending",
      schema_in_sync: true,
      diagnostics: [],
    })
  })

  it("accepts the schema and mapping as JSON text in a form body", async () => {
    const form = new URLSearchParams({
      schema: JSON.stringify(INVOICE_SCHEMA),
      auto_map: "false",
      mapping: JSON.stringify({
        kind: "object",
        properties: { invoice_number: { kind: "scalar_from_agent", agent_name: "Invoice number" } },
      }),
    })
    const r = await a.send("PUT", `/projects/${projectId}/schema/`, form)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ schema: INVOICE_SCHEMA, status: "success" })
  })

  it("is tenant-scoped", async () => {
    const other = api.client(await api.newKey("globex"))
    expectProblem(await other.get(`/projects/${projectId}/schema/`), 404)
    expectProblem(
      await other.put(`/projects/${projectId}/schema/`, { schema: INVOICE_SCHEMA, auto_map: true }),
      404,
    )
    expectProblem(await other.get(`/projects/${projectId}/results/schema/`), 404)
  })
})

describe("results in the schema's shape", () => {
  let projectId: string
  const schema = {
    type: "object",
    properties: {
      invoice: {
        type: "object",
        properties: {
          number: { type: "string" },
          total: { type: "number" },
          currency: { type: "string", enum: ["USD", "EUR"] },
          po_number: { type: ["string", "null"] },
        },
        required: ["number", "total", "currency"],
        additionalProperties: false,
      },
      revenue_by_region: {
        type: "array",
        items: {
          type: "object",
          properties: { revenue: { type: "integer" } },
          required: ["revenue"],
          additionalProperties: false,
        },
      },
      revenue: { type: "object", additionalProperties: { type: "number" } },
    },
    required: ["invoice", "revenue_by_region", "revenue"],
  }
  const mapping = {
    kind: "object",
    properties: {
      invoice: {
        kind: "object",
        properties: {
          number: { kind: "scalar_from_agent", agent_name: "Invoice number" },
          total: { kind: "scalar_from_agent", agent_name: "Total due" },
          currency: { kind: "scalar_from_agent", agent_name: "Currency" },
          po_number: { kind: "scalar_from_agent", agent_name: "Purchase order" },
        },
      },
      revenue_by_region: {
        kind: "array_from_dimension",
        dimension_name: "Region",
        items: {
          kind: "object",
          properties: { revenue: { kind: "scalar_from_agent", agent_name: "Revenue" } },
        },
      },
      revenue: {
        kind: "object_from_dimension",
        dimension_name: "Region",
        values: { kind: "scalar_from_agent", agent_name: "Revenue" },
      },
    },
  }
  const agents: Record<string, string> = {}

  beforeAll(async () => {
    projectId = await createProject(a)
    await upload(a, projectId, "invoice.pdf", await invoiceA())
    await upload(a, projectId, "report.pdf", await regionalReport())
    const region = await a.post(`/projects/${projectId}/dimensions/`, { name: "Region" })
    for (const body of [
      { name: "Invoice number", extraction_instructions: "The invoice number" },
      { name: "Total due", extraction_instructions: "The total amount due", value_type: "number" },
      { name: "Currency", extraction_instructions: "The invoice currency" },
      { name: "Purchase order", extraction_instructions: "The purchase order (PO) number the buyer gave" },
      {
        name: "Revenue",
        extraction_instructions: "Revenue of the region",
        value_type: "number",
        dimensions: [{ dimension_id: region.body.id, values: ["EU", "US", "APAC"] }],
      },
    ])
      agents[body.name] = (await createAgent(a, projectId, body)).id
    await waitProcessed(a, projectId)
    const put = await a.put(`/projects/${projectId}/schema/`, { schema, auto_map: false, mapping })
    expect(put.status).toBe(200)
    expect(put.body.diagnostics).toEqual([])
    await launchAndWait(a, projectId)
  })

  it("returns an object that validates against the schema, with the right values", async () => {
    const r = await schemaResults(a, projectId, schema)
    expect(r.status).toBe(200)
    expectValid(schema, r.body)
    expect(r.body).toEqual({
      invoice: { number: "INV-1001", total: 1200, currency: "USD", po_number: null },
      revenue_by_region: [{ revenue: 1200 }, { revenue: 3400 }, { revenue: 560 }],
      revenue: { EU: 1200, US: 3400, APAC: 560 },
    })
  })

  it("adds no enrich siblings to objects whose schema allows no other keys, so the answer still validates", async () => {
    const plain = await schemaResults(a, projectId, schema)
    const r = await schemaResults(a, projectId, schema, { enrich: true })
    expect(r.status).toBe(200)
    expectValid(schema, r.body)
    // `invoice` and the items of `revenue_by_region` are closed (additionalProperties false)
    expect(r.body).toEqual(plain.body)
  })

  it("enriches every scalar field with its consistency and a deep link to its result", async () => {
    const open = structuredClone(schema) as any
    delete open.properties.invoice.additionalProperties
    delete open.properties.revenue_by_region.items.additionalProperties
    expect(
      (await a.put(`/projects/${projectId}/schema/`, { schema: open, auto_map: false, mapping })).status,
    ).toBe(200)
    const r = await schemaResults(a, projectId, open, { enrich: true })
    expect((await a.put(`/projects/${projectId}/schema/`, { schema, auto_map: false, mapping })).status).toBe(
      200,
    )
    expect(r.status).toBe(200)
    expectValid(open, r.body)
    const rows = (await a.get(`/projects/${projectId}/results/?agent_id=${agents["Invoice number"]}`)).body
      .results
    const resultId = rows[0].resolution_result.id
    expect(r.body.invoice).toMatchObject({
      number: "INV-1001",
      number_consistency: "Resolved",
      number_service_url: `${api.origin}/projects/${projectId}/agents/${agents["Invoice number"]}/${resultId}`,
      total_consistency: "Resolved",
      po_number: null,
      po_number_consistency: "No result",
    })
    expect(r.body.invoice.po_number_service_url).toMatch(
      new RegExp(`/projects/${projectId}/agents/${agents["Purchase order"]}/[0-9a-f-]{36}$`),
    )
    expect(r.body.revenue_by_region[0]).toMatchObject({ revenue: 1200, revenue_consistency: "Resolved" })
  })

  it("follows an override of a value", async () => {
    const rows = (await a.get(`/projects/${projectId}/results/?agent_id=${agents.Currency}`)).body.results
    await a.patch(`/projects/${projectId}/results/${rows[0].resolution_result.id}/`, { value: "EUR" })
    const r = await schemaResults(a, projectId, schema)
    expect(r.body.invoice.currency).toBe("EUR")
    expectValid(schema, r.body)
  })
})

describe("results that always validate, in the schema's key order", () => {
  let projectId: string
  const agents: Record<string, string> = {}
  // Keys in an order of their own at every level (PostgreSQL's jsonb would sort them by length, then bytes).
  const schema = {
    properties: {
      documents: {
        type: "array",
        minItems: 1,
        items: {
          type: "object",
          properties: {
            file_name: { type: "string" },
            invoice_number: { type: "string" },
            total_due: { type: "integer" },
            currency: { enum: ["USD", "EUR"], type: "string" },
            po_number: { type: ["string", "null"] },
          },
          required: ["file_name", "invoice_number", "total_due", "currency", "po_number"],
          additionalProperties: false,
        },
      },
    },
    type: "object",
    required: ["documents"],
    title: "Invoices",
  }
  const mapping = {
    properties: {
      documents: {
        kind: "array_from_dimension",
        items: {
          kind: "object",
          properties: {
            po_number: { kind: "scalar_from_agent", agent_name: "Purchase order" },
            currency: { kind: "scalar_from_agent", agent_name: "Currency" },
            total_due: { kind: "scalar_from_agent", agent_name: "Total due" },
            invoice_number: { kind: "scalar_from_agent", agent_name: "Invoice number" },
            file_name: { kind: "dimension_value", dimension_name: "Document" },
          },
        },
        dimension_name: "Document",
      },
    },
    kind: "object",
  }
  const FIRST = {
    file_name: "a.pdf",
    invoice_number: "INV-1001",
    total_due: 1200,
    currency: "USD",
    po_number: null,
  }

  beforeAll(async () => {
    projectId = await createProject(a)
    await upload(a, projectId, "a.pdf", await invoiceA())
    const second = await invoice({
      number: "INV-2002",
      date: "April 9, 2024",
      seller: "Globex Corporation",
      currency: "EUR",
      subtotal: "1.028,80 EUR",
      tax: "205,76 EUR",
      total: "1.234,56 EUR",
    })
    await upload(a, projectId, "b.pdf", second)
    await upload(
      a,
      projectId,
      "memo.pdf",
      await textPdf(["Meeting notes\n\nWe agreed to meet again next week."]),
    )
    const dimensions = (await a.get(`/projects/${projectId}/dimensions/`)).body
    const document = dimensions.find((d: any) => d.name === "Document")
    for (const body of [
      { name: "Invoice number", extraction_instructions: "The invoice number" },
      {
        name: "Total due",
        extraction_instructions: "The total amount due",
        value_type: "number",
        value_if_not_found: "0",
      },
      { name: "Currency", extraction_instructions: "The invoice currency" },
      { name: "Purchase order", extraction_instructions: "The purchase order (PO) number the buyer gave" },
    ])
      agents[body.name] = (
        await createAgent(a, projectId, { ...body, dimensions: [{ dimension_id: document.id }] })
      ).id
    await waitProcessed(a, projectId)
    const put = await a.put(`/projects/${projectId}/schema/`, { schema, auto_map: false, mapping })
    expect(put.status).toBe(200)
    expect(put.body.diagnostics).toEqual([])
    await launchAndWait(a, projectId)
  })

  it("returns the schema and the mapping with the keys in the order they were written", async () => {
    const record = await a.get(`/projects/${projectId}/schema/`)
    expect(record.text).toContain(JSON.stringify(schema))
    expect(JSON.stringify(record.body.schema)).toBe(JSON.stringify(schema))
    expect(JSON.stringify(record.body.mapping)).toBe(JSON.stringify(mapping))
    const project = await a.get(`/projects/${projectId}/`)
    expect(JSON.stringify(project.body.target_output_schema)).toBe(JSON.stringify(schema))
    // The same schema with its keys in another order is the same schema: a mapping is still required.
    const reordered = {
      type: "object",
      title: "Invoices",
      required: ["documents"],
      properties: schema.properties,
    }
    const again = await a.put(`/projects/${projectId}/schema/`, { schema: reordered, auto_map: false })
    expectProblem(again, 400)
    expect(again.body.errors[0].path).toBe("mapping")
  })

  it("fills required fields: null where allowed, else the agent's value_if_not_found when the field accepts it; an item that cannot be valid is left out", async () => {
    const r = await schemaResults(a, projectId, schema)
    expect(r.status).toBe(200)
    expectValid(schema, r.body)
    expect(r.body).toEqual({
      documents: [
        FIRST,
        // 1,234.56 is no integer: the value_if_not_found "0" stands in; no purchase order: null
        { file_name: "b.pdf", invoice_number: "INV-2002", total_due: 0, currency: "EUR", po_number: null },
        // memo.pdf: no currency, and its value_if_not_found ("n/a") is not in the enum
      ],
    })
    // The schema's key order, not the mapping's
    for (const item of r.body.documents)
      expect(Object.keys(item)).toEqual(Object.keys(schema.properties.documents.items.properties))
    expect(r.text.startsWith('{"documents":[{"file_name":"a.pdf","invoice_number":"INV-1001"')).toBe(true)
  })

  it("with enrich, closed items get no siblings and _missing says what was left out and why", async () => {
    const r = await schemaResults(a, projectId, schema, { enrich: true })
    expect(r.status).toBe(200)
    expectValid(schema, r.body)
    expect(r.body.documents).toHaveLength(2)
    expect(r.body.documents[0]).toEqual(FIRST)
    expect(r.body._missing).toEqual([
      {
        path: "documents/[*]/currency",
        dimension_values: { Document: "memo.pdf" },
        message: expect.stringMatching(/nothing was found.*"n\/a".*left out/),
      },
    ])
  })

  it("puts an item back once its value is overridden", async () => {
    const rows = (await a.get(`/projects/${projectId}/results/?agent_id=${agents.Currency}`)).body.results
    const memo = rows.find((row: any) => row.result_name.includes("memo.pdf"))
    expect(memo.resolution_result.resolution_status).toBe("No result")
    await a.patch(`/projects/${projectId}/results/${memo.resolution_result.id}/`, { value: "eur" })
    const r = await schemaResults(a, projectId, schema)
    expect(r.body.documents[2]).toEqual({
      file_name: "memo.pdf",
      invoice_number: "n/a",
      total_due: 0,
      currency: "EUR",
      po_number: null,
    })
    expect((await schemaResults(a, projectId, schema, { enrich: true })).body._missing).toBeUndefined()
  })

  it("refuses with 422 schema-unsatisfied when nothing can fill a required field; enrich answers with _missing", async () => {
    const stricter = {
      ...schema,
      properties: { ...schema.properties, approved_by: { type: "string" } },
      required: ["documents", "approved_by"],
    }
    const put = await a.put(`/projects/${projectId}/schema/`, { schema: stricter, auto_map: false, mapping })
    expect(put.body.diagnostics).toEqual([
      expect.objectContaining({ path: "approved_by", code: "required_unmapped" }),
    ])
    const r = await schemaResults(a, projectId, stricter)
    expectProblem(r, 422)
    expect(r.body).toMatchObject({ type: UNSATISFIED, title: "Results do not satisfy the schema" })
    expect(r.body.errors).toEqual([{ path: "approved_by", message: expect.stringContaining("not mapped") }])
    const enriched = await schemaResults(a, projectId, stricter, { enrich: true })
    expect(enriched.status).toBe(200)
    expect(enriched.body.documents).toHaveLength(3)
    expect(enriched.body._missing).toEqual([
      { path: "approved_by", dimension_values: {}, message: expect.stringContaining("not mapped") },
    ])
  })
})

describe("automatic mapping", () => {
  it("generates agents and a mapping in the background; results validate once the pipeline ran", async () => {
    const projectId = await createProject(a)
    await upload(a, projectId, "invoice.pdf", await invoiceA())
    const r = await a.put(`/projects/${projectId}/schema/`, { schema: INVOICE_SCHEMA, auto_map: true })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ auto_map: true, mapping: null, status: "pending", source: "llm" })
    const done = await mappingSettled(projectId)
    expect(done).toMatchObject({ status: "success", source: "llm", error: null, generated_at: timestamp })
    // Generated, by the offline planner of the default provider.
    expect(done.generated_by).toBe("local")
    expect(done.mapping).toEqual({
      kind: "object",
      properties: {
        invoice_number: { kind: "scalar_from_agent", agent_name: "Invoice number" },
        total_due: { kind: "scalar_from_agent", agent_name: "Total due" },
        currency: { kind: "scalar_from_agent", agent_name: "Currency" },
      },
    })
    const names = (await a.get(`/projects/${projectId}/agents/`)).body.map((x: any) => x.name).sort()
    expect(names).toEqual(["Currency", "Invoice number", "Total due"])
    await waitProcessed(a, projectId)
    await launchAndWait(a, projectId)
    const results = await schemaResults(a, projectId, INVOICE_SCHEMA)
    expectValid(INVOICE_SCHEMA, results.body)
    expect(results.body).toEqual({ invoice_number: "INV-1001", total_due: 1200, currency: "USD" })
    await schemaResults(a, projectId, INVOICE_SCHEMA, { enrich: true })
  })

  it("maps an object keyed by a dimension, discovers its values from the documents, and fills it", async () => {
    const schema = {
      type: "object",
      properties: {
        revenue_by_region: {
          type: "object",
          description: "Revenue of each region",
          additionalProperties: { type: "number" },
          examples: [{ EU: 100, US: 200 }],
        },
      },
      required: ["revenue_by_region"],
    }
    const projectId = await createProject(a)
    await upload(a, projectId, "report.pdf", await regionalReport())
    await a.put(`/projects/${projectId}/schema/`, { schema, auto_map: true })
    const done = await mappingSettled(projectId)
    expect(done.status).toBe("success")
    await waitProcessed(a, projectId)
    await launchAndWait(a, projectId)
    const results = await schemaResults(a, projectId, schema)
    expectValid(schema, results.body)
    expect(results.body).toEqual({ revenue_by_region: { EU: 1200, US: 3400, APAC: 560 } })
    await schemaResults(a, projectId, schema, { enrich: true })
  })

  it("maps an array of objects over a dimension discovered from the documents, each item named by its value", async () => {
    const schema = {
      type: "object",
      properties: {
        regions: {
          type: "array",
          description: "The regions of the report",
          items: {
            type: "object",
            properties: {
              region: { type: "string" },
              revenue: { type: "number", description: "Revenue of the region" },
            },
            required: ["region", "revenue"],
          },
        },
      },
    }
    const projectId = await createProject(a)
    await upload(a, projectId, "report.pdf", await regionalReport())
    await a.put(`/projects/${projectId}/schema/`, { schema, auto_map: true })
    const done = await mappingSettled(projectId)
    expect(done).toMatchObject({ status: "success" })
    expect(done.mapping.properties.regions).toEqual({
      kind: "array_from_dimension",
      dimension_name: "Region",
      items: {
        kind: "object",
        properties: {
          region: { kind: "dimension_value", dimension_name: "Region" },
          revenue: { kind: "scalar_from_agent", agent_name: "Region revenue" },
        },
      },
    })
    await waitProcessed(a, projectId)
    await launchAndWait(a, projectId)
    const results = await schemaResults(a, projectId, schema)
    await schemaResults(a, projectId, schema, { enrich: true })
    expectValid(schema, results.body)
    expect(results.body).toEqual({
      regions: [
        { region: "EU", revenue: 1200 },
        { region: "US", revenue: 3400 },
        { region: "APAC", revenue: 560 },
      ],
    })
  })

  it("reports a schema it cannot map as failed, and results/schema answers 422", async () => {
    const projectId = await createProject(a)
    await a.put(`/projects/${projectId}/schema/`, { schema: { type: "object" }, auto_map: true })
    const done = await mappingSettled(projectId)
    expect(done).toMatchObject({ status: "failed", error: expect.stringContaining("") })
    expect(done.error.length).toBeGreaterThan(10)
    expectProblem(await a.get(`/projects/${projectId}/results/schema/`), 422)
    expect((await a.get(`/projects/${projectId}/status/`)).body.schema_status).toBe("failed")
  })

  it("answers 409 while the mapping is being generated", async () => {
    // No worker runs beside this API: the generation stays queued.
    const projectId = await createProject(b)
    await b.put(`/projects/${projectId}/schema/`, { schema: INVOICE_SCHEMA, auto_map: true })
    const r = await b.get(`/projects/${projectId}/results/schema/`)
    expectProblem(r, 409)
    expect(r.body.detail).toMatch(/being generated/)
  })
})

describe("generation against newer schemas and dead workers", () => {
  // The API without a worker: the test plays the worker, running every due mapping task.
  const runMappingTask = async (db: ReturnType<typeof makeKysely>) => {
    const tasks = await claim(db, {
      workerId: "test",
      kinds: [OUTPUT_MAPPING_TASK],
      leaseMs: 60_000,
      limit: 20,
    })
    expect(tasks.length).toBeGreaterThan(0)
    for (const task of tasks)
      await Effect.runPromise(
        outputMappingTaskHandler(localModel)(task, {
          workerId: "test",
          db,
          complete: async (trx) => {
            await complete(trx, task.id, "test")
          },
        }),
      )
  }

  it("a generation queued for a schema that has since changed saves nothing", async () => {
    const db = makeKysely(idle.dbUrl, 2)
    try {
      const projectId = await createProject(b)
      await b.put(`/projects/${projectId}/schema/`, { schema: INVOICE_SCHEMA, auto_map: true })
      const manual = await b.put(`/projects/${projectId}/schema/`, {
        schema: INVOICE_SCHEMA,
        auto_map: false,
        mapping: null,
      })
      expect(manual.body).toMatchObject({ auto_map: false, status: "pending" })
      await runMappingTask(db)
      expect((await b.get(`/projects/${projectId}/schema/`)).body).toMatchObject({
        mapping: null,
        status: "pending",
      })
      expect((await b.get(`/projects/${projectId}/agents/`)).body).toEqual([])
      // A new auto_map PUT queues a new generation, which does save.
      await b.put(`/projects/${projectId}/schema/`, { schema: INVOICE_SCHEMA, auto_map: true })
      await runMappingTask(db)
      expect((await b.get(`/projects/${projectId}/schema/`)).body).toMatchObject({
        status: "success",
        source: "llm",
      })
      expect((await b.get(`/projects/${projectId}/agents/`)).body).toHaveLength(3)
      // Regenerating reuses the agents it made.
      await b.put(`/projects/${projectId}/schema/`, { schema: INVOICE_SCHEMA, auto_map: true })
      await runMappingTask(db)
      expect((await b.get(`/projects/${projectId}/agents/`)).body).toHaveLength(3)
      expect((await b.get(`/projects/${projectId}/status/`)).body.pipeline_running).toBe(false)
    } finally {
      await db.destroy()
    }
  })

  it("a generation whose last attempt died with its worker ends failed, not pending forever", async () => {
    const db = makeKysely(idle.dbUrl, 2)
    try {
      const projectId = await createProject(b)
      await b.put(`/projects/${projectId}/schema/`, { schema: INVOICE_SCHEMA, auto_map: true })
      await db
        .updateTable("tasks")
        .set({ status: "failed", last_error: "lease expired during the last attempt" })
        .where("kind", "=", OUTPUT_MAPPING_TASK)
        .where("project_id", "=", projectId)
        .execute()
      expect(await Effect.runPromise(failAbandonedMappings(db))).toBe(1)
      const record = (await b.get(`/projects/${projectId}/schema/`)).body
      expect(record).toMatchObject({ status: "failed", error: expect.stringContaining("lease expired") })
      expectProblem(await b.get(`/projects/${projectId}/results/schema/`), 422)
      expect(await Effect.runPromise(failAbandonedMappings(db))).toBe(0)
    } finally {
      await db.destroy()
    }
  })
})

describe("POST /extract/", () => {
  /** POST /extract/ with the files (each a `files` part) and the text fields. */
  const extract = (files: ReadonlyArray<[string, Uint8Array]>, fields: Record<string, string>) => {
    const form = new FormData()
    for (const [name, bytes] of files)
      form.append("files", new Blob([bytes as Uint8Array<ArrayBuffer>]), name)
    for (const [k, v] of Object.entries(fields)) form.append(k, v)
    return a.send("POST", "/extract/", form)
  }
  const projectCount = async (client: Client) => (await client.get("/projects/")).body.length

  it("creates the project, parses the files, maps, runs, and serves schema-shaped results", async () => {
    const r = await extract(
      [
        ["invoice.pdf", await invoiceA()],
        ["copy.pdf", await invoiceA()],
      ],
      { schema: JSON.stringify(INVOICE_SCHEMA), auto_map: "true", project_name: "Invoices via API" },
    )
    expect(r.status).toBe(202)
    const projectId = r.body.project_id
    expect(r.body).toEqual({
      project_id: expect.any(String),
      status_url: `/api/v1/projects/${projectId}/status/`,
      results_url: `/api/v1/projects/${projectId}/results/schema/`,
    })
    const project = await a.get(`/projects/${projectId}/`)
    expect(project.body).toMatchObject({
      name: "Invoices via API",
      document_count: 2,
      target_output_schema: INVOICE_SCHEMA,
    })
    const status = await extractionDone(r.body.status_url.replace("/api/v1", ""))
    expect(status.documents_by_status).toEqual({ Pending: 0, Processed: 2, Failed: 0 })
    const agents = (await a.get(`/projects/${projectId}/agents/`)).body
    expect(agents.every((x: any) => x.extraction_status === "Processed")).toBe(true)
    const results = await a.get(r.body.results_url.replace("/api/v1", ""))
    expect(results.status).toBe(200)
    await schemaResults(a, projectId, INVOICE_SCHEMA, { enrich: true })
    expectValid(INVOICE_SCHEMA, results.body)
    expect(results.body).toEqual({ invoice_number: "INV-1001", total_due: 1200, currency: "USD" })
  })

  it("gives one item per file for an array described as one entry per file", async () => {
    const schema = {
      type: "object",
      properties: {
        invoices: {
          type: "array",
          description: "One entry per uploaded file",
          items: {
            type: "object",
            properties: {
              file_name: { type: "string" },
              invoice_number: { type: "string", description: "The invoice number" },
              total_due: { type: "number", description: "The total amount due" },
            },
            required: ["file_name", "invoice_number", "total_due"],
          },
        },
      },
      required: ["invoices"],
    }
    const second = await invoice({
      number: "INV-2002",
      date: "April 9, 2024",
      seller: "Globex Corporation",
      currency: "EUR",
      subtotal: "2.000,00 EUR",
      tax: "400,00 EUR",
      total: "2.400,00 EUR",
    })
    const r = await extract(
      [
        ["a.pdf", await invoiceA()],
        ["b.pdf", second],
      ],
      { schema: JSON.stringify(schema), auto_map: "true" },
    )
    expect(r.status).toBe(202)
    const projectId = r.body.project_id
    await extractionDone(`/projects/${projectId}/status/`)
    const mapping = (await a.get(`/projects/${projectId}/schema/`)).body.mapping
    expect(mapping.properties.invoices).toMatchObject({
      kind: "array_from_dimension",
      dimension_name: "Document",
    })
    const results = await schemaResults(a, projectId, schema)
    await schemaResults(a, projectId, schema, { enrich: true })
    expectValid(schema, results.body)
    expect(results.body).toEqual({
      invoices: [
        { file_name: "a.pdf", invoice_number: "INV-1001", total_due: 1200 },
        { file_name: "b.pdf", invoice_number: "INV-2002", total_due: 2400 },
      ],
    })
  })

  it("with auto_map false stores only the schema; results wait for a mapping", async () => {
    const r = await extract([["invoice.pdf", await invoiceA()]], {
      schema: JSON.stringify(INVOICE_SCHEMA),
      auto_map: "false",
    })
    expect(r.status).toBe(202)
    const project = await a.get(`/projects/${r.body.project_id}/`)
    expect(project.body).toMatchObject({ name: "API Extraction", output_mapping_status: "pending" })
    expect((await a.get(`/projects/${r.body.project_id}/schema/`)).body).toMatchObject({
      auto_map: false,
      mapping: null,
    })
    expectProblem(await a.get(`/projects/${r.body.project_id}/results/schema/`), 409)
    expect((await a.get(`/projects/${r.body.project_id}/agents/`)).body).toEqual([])
  })

  it.each([
    ["no files", [], { schema: JSON.stringify(INVOICE_SCHEMA), auto_map: "true" }, 400, "files"],
    ["a schema that is not JSON", "pdf", { schema: "{type:", auto_map: "true" }, 400, "schema"],
    [
      "an invalid schema",
      "pdf",
      { schema: JSON.stringify({ type: 12 }), auto_map: "true" },
      400,
      "schema/type",
    ],
    ["a missing schema", "pdf", { auto_map: "true" }, 400, "schema"],
    ["a missing auto_map", "pdf", { schema: JSON.stringify(INVOICE_SCHEMA) }, 400, "auto_map"],
    [
      "an unsupported file",
      "exe",
      { schema: JSON.stringify(INVOICE_SCHEMA), auto_map: "true" },
      415,
      undefined,
    ],
  ] as const)("refuses %s and creates nothing", async (_what, files, fields, status, path) => {
    const before = await projectCount(a)
    const list: Array<[string, Uint8Array]> =
      files === "pdf"
        ? [["invoice.pdf", await invoiceA()]]
        : files === "exe"
          ? [
              ["invoice.pdf", await invoiceA()],
              ["tool.exe", new Uint8Array([77, 90, 0, 0])],
            ]
          : []
    const r = await extract(list, fields)
    expectProblem(r, status)
    if (path !== undefined) expect(r.body.errors.map((e: any) => e.path)).toContain(path)
    expect(await projectCount(a)).toBe(before)
  })

  it("needs an API key", async () => {
    const r = await api.client(undefined).send("POST", "/extract/", new FormData())
    expectProblem(r, 401)
  })
})
