/**
 * Text values read by OCR, held against each other across a project's documents, through the REST API
 * with the default `local` model and real OCR: four scanned receipts of one shop, one of them printing its
 * street a letter off (as OCR misreads a scan), the address of another shop, and a PDF with a text layer
 * that prints the same letter off. The misread receipt takes the address its three twins agree on, and its
 * justification says what OCR read; the other shop's address and the text layer's stay as read.
 */
import { textPdf } from "@dxs/testing/Documents"
import { textImage } from "@dxs/testing/ImageFiles"
import { type Client, createProject } from "@dxs/testing/RestClient"
import { createAgent, launchAndWait, resultsOf, upload, waitProcessed } from "@dxs/testing/Runs"
import { beforeAll, describe, expect, it } from "vitest"
import { startTestApi } from "./harness.ts"

let a: Client

const receipt = (street: string, shop = "KEDAI BUKU MAJU SDN BHD", town = "40300 SHAH ALAM, SELANGOR.") =>
  textImage([shop, `LOT 3, JALAN ${street} 23/1,`, town, "TEL 03-5511 2233", "CASH RECEIPT", "TOTAL 12.50"])
    .png

describe("addresses read by OCR across the receipts of one shop", () => {
  let byDocument: Record<string, { value: string; justification: string }> = {}

  beforeAll(async () => {
    const api = await startTestApi({ worker: {} })
    a = api.client(await api.newKey("agreement"))
    const projectId = await createProject(a)
    for (const n of [1, 3, 4]) await upload(a, projectId, `receipt-${n}.png`, receipt("PELABUR"))
    await upload(a, projectId, "receipt-2.png", receipt("PELABAR"))
    await upload(
      a,
      projectId,
      "other-shop.png",
      receipt("SS15/4B NO. 76", "KEDAI RUNCIT SUBANG SDN BHD", "47500 SUBANG JAYA, SELANGOR."),
    )
    await upload(
      a,
      projectId,
      "typed.pdf",
      await textPdf([
        "KEDAI BUKU MAJU SDN BHD\nLOT 3, JALAN PELABAR 23/1,\n40300 SHAH ALAM, SELANGOR.\nTEL 03-5511 2233\nCASH RECEIPT\nTOTAL 12.50",
      ]),
    )
    await waitProcessed(a, projectId)
    const dimensions = await a.get(`/projects/${projectId}/dimensions/`)
    const documentDimension = dimensions.body.find((d: any) => d.source === "DOCUMENT")
    const address = await createAgent(a, projectId, {
      name: "Address",
      extraction_instructions: "The address of the shop or company that issued the receipt",
      dimensions: [{ dimension_id: documentDimension.id }],
    })
    await launchAndWait(a, projectId)
    byDocument = Object.fromEntries(
      (await resultsOf(a, projectId, address.id)).map((row) => [
        row.dimension_instances[0].dimension_value,
        {
          value: String(row.resolution_result.value),
          justification: row.resolution_result.justification_for_resolution_status ?? "",
        },
      ]),
    )
  }, 120_000)

  it("gives the misread receipt the address its twins agree on, saying what OCR read", () => {
    const agreed = byDocument["receipt-1.png"]!.value
    expect(agreed).toMatch(/JALAN PELABUR 23\/1/i)
    expect(byDocument["receipt-3.png"]!.value).toBe(agreed)
    expect(byDocument["receipt-2.png"]!.value).toBe(agreed)
    expect(byDocument["receipt-2.png"]!.justification).toMatch(/OCR read ".*PELABAR.*"; 4 readings/i)
    expect(byDocument["receipt-1.png"]!.justification).not.toContain("OCR read")
  })

  it("leaves another shop's address, and a text layer's, as read", () => {
    expect(byDocument["other-shop.png"]!.value).toMatch(/SS15\/4B/)
    expect(byDocument["other-shop.png"]!.justification).not.toContain("OCR read")
    expect(byDocument["typed.pdf"]!.value).toMatch(/JALAN PELABAR 23\/1/i)
    expect(byDocument["typed.pdf"]!.justification).not.toContain("OCR read")
  })
})
