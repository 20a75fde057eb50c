/**
 * Real resources of one organisation, made through the REST API (which needs a worker: the document is
 * parsed and a run produces a result): what the hostile-input suites aim their requests at.
 */
import { randomUUID } from "node:crypto"
import { expect } from "vitest"
import { invoice, onePagePdf } from "./Documents.ts"
import type { Client } from "./RestClient.ts"
import { createAgent, launchAndWait, upload, waitProcessed } from "./Runs.ts"

export interface Fixtures {
  readonly project: string
  /** Where documents are copied to. */
  readonly otherProject: string
  readonly folder: string
  readonly dimension: string
  readonly agent: string
  readonly agentName: string
  /** Processed, with a result of a real run. */
  readonly document: string
  /** Another processed document, one whose file may be replaced. */
  readonly spareDocument: string
  readonly result: string
  readonly extraction: string
  readonly webhook: string
  /** The document's signed download link. */
  readonly fileUrl: string
}

/** Makes the fixtures; the webhook points at `webhookUrl`. */
export const createFixtures = async (client: Client, webhookUrl: string): Promise<Fixtures> => {
  const created = async (path: string, body: unknown) => {
    const r = await client.post(path, body)
    expect(r.status, `${path}: ${r.text}`).toBe(201)
    return r.body.id as string
  }
  const project = await created("/projects/", { name: `Hostile ${randomUUID().slice(0, 8)}` })
  const otherProject = await created("/projects/", { name: `Target ${randomUUID().slice(0, 8)}` })
  const folder = await created("/folders/", { name: `Folder ${randomUUID().slice(0, 8)}` })
  const dimension = await created(`/projects/${project}/dimensions/`, { name: "Region" })
  const agent = await createAgent(client, project, {
    name: "Total Due",
    extraction_instructions: "The total amount due on the invoice",
    value_type: "number",
  })
  const document = await upload(
    client,
    project,
    "invoice.pdf",
    await invoice({
      number: "INV-1",
      date: "March 3, 2024",
      seller: "Acme Supplies Inc.",
      currency: "USD",
      subtotal: "$1,000.00",
      tax: "$200.00",
      total: "$1,200.00",
    }),
  )
  const spareDocument = await upload(client, project, "spare.pdf", onePagePdf("spare"))
  const documents = await waitProcessed(client, project)
  expect(documents.map((d) => d.status)).toEqual(["Processed", "Processed"])
  await launchAndWait(client, project)
  const results = await client.get(`/projects/${project}/results/?agent_id=${agent.id}`)
  const result = results.body.results[0].resolution_result.id as string
  const extractions = await client.get(`/projects/${project}/results/${result}/extractions/`)
  const extraction = extractions.body.data?.[0]?.id as string
  expect(extraction, JSON.stringify(extractions.body)).toEqual(expect.any(String))
  const webhook = await created("/webhooks/", {
    name: "fixture",
    url: webhookUrl,
    subscribed_events: ["webhook.ping"],
  })
  return {
    project,
    otherProject,
    folder,
    dimension,
    agent: agent.id,
    agentName: agent.name,
    document,
    spareDocument,
    result,
    extraction,
    webhook,
    fileUrl: documents.find((d) => d.id === document).file_url,
  }
}
