/**
 * The offline `local` extractor through the REST API: an answer that does not answer the agent (an amount
 * in another currency, a line labelled as something else) is not cited, so it cannot make a clean result
 * disagree with itself.
 */

import { invoice } from "@dxs/testing/Documents"
import { type Client, createProject } from "@dxs/testing/RestClient"
import { createAgent, launchAndWait, resultsOf, upload, waitProcessed } from "@dxs/testing/Runs"
import { beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

let api: TestApi
let a: Client

beforeAll(async () => {
  api = await startTestApi({ worker: {} })
  a = api.client(await api.newKey("acme"))
})

const services = [
  "SERVICES AGREEMENT",
  "",
  "This Services Agreement is made between Northwind Traders, Inc. and Contoso Ltd.",
  "",
  "1. Services. Contoso shall provide hosting and support services.",
  "",
  "2. Fees. Annual fee: 120,000 USD payable quarterly.",
  "",
  "3. Term. This Agreement shall remain in effect for three (3) years.",
].join("\n")

describe("an invoice total in EUR over an invoice and a contract", () => {
  it("is the invoice's total, cites nothing in the contract, and needs no attention", async () => {
    const projectId = await createProject(a)
    const invoiceId = await upload(
      a,
      projectId,
      "invoice.pdf",
      await invoice({
        number: "INV-3003",
        date: "May 6, 2024",
        seller: "Fabrikam GmbH",
        currency: "EUR",
        subtotal: "1.000,00 EUR",
        tax: "190,00 EUR",
        total: "1.190,00 EUR",
      }),
    )
    const contractId = await upload(
      a,
      projectId,
      "services-agreement.txt",
      new TextEncoder().encode(services),
    )
    await waitProcessed(a, projectId)
    const agent = await createAgent(a, projectId, {
      name: "Invoice total",
      extraction_instructions: "The total amount of the invoice including VAT",
      value_type: "number",
      unit: "EUR",
    })
    const status = await launchAndWait(a, projectId)
    expect(status.pipeline_running).toBe(false)

    const [row, ...others] = await resultsOf(a, projectId, agent.id)
    expect(others).toEqual([])
    expect(row.resolution_result).toMatchObject({ value: 1190, resolution_status: "Resolved" })
    const extractions = await a.get(`/projects/${projectId}/results/${row.resolution_result.id}/extractions/`)
    expect(extractions.body.data.map((e: any) => [e.document_id, e.value])).toEqual([[invoiceId, "1190"]])
    expect(extractions.body.data.map((e: any) => e.document_id)).not.toContain(contractId)
    const detail = await a.get(`/projects/${projectId}/agents/${agent.id}/`)
    expect(detail.body.requires_attention).toBe(false)
  })
})
