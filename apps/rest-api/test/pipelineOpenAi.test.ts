/**
 * The pipeline with the `openai` provider against a fake OpenAI-compatible server on loopback: values,
 * citations and token accounting through the REST API, and the response cache in Postgres.
 */
import { makeKysely } from "@dxs/db"
import { makeOpenAiModel } from "@dxs/pipeline/llm/OpenAi"
import { postgresResponseCache } from "@dxs/pipeline/llm/ResponseCache"
import { invoice } from "@dxs/testing/Documents"
import {
  answerDocument,
  type ChatCompletionRequestBody,
  documentRequest,
  genericResponder,
  labelledLines,
  startFakeOpenAiServer,
} from "@dxs/testing/FakeOpenAiServer"
import { type Client, createProject } from "@dxs/testing/RestClient"
import { launchAndWait as launchRun, until, upload } from "@dxs/testing/Runs"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApi, type TestApi } from "./harness.ts"

/** Answers like a model that reads "Label: value" lines: the label is the agent's name. */
const respond = (body: ChatCompletionRequestBody) => {
  const name = body.response_format?.json_schema?.name
  const asked = documentRequest(body)
  if (asked !== undefined)
    return answerDocument(asked, (agent) =>
      labelledLines(asked, agent, { label: (a) => (a.name === "Total Amount" ? "Total Due" : a.name) }),
    )
  if (name === "derive_value") return { value: "42", reasoning: "Computed from the inputs." }
  if (name === "describe_fields") {
    const schema = body.response_format?.json_schema?.schema as any
    const paths: Array<string> = schema.properties.fields.items.properties.path.enum
    return {
      fields: paths.map((path) => ({
        path,
        extraction_instructions: `Model-written: find the ${path} on the invoice.`,
        value_type: "string",
        unit: "",
        examples: path === "total_due" ? "1200, 99.5" : "",
      })),
    }
  }
  return undefined
}

let api: TestApi
let a: Client
let db: ReturnType<typeof makeKysely>
let fake: Awaited<ReturnType<typeof startFakeOpenAiServer>>

beforeAll(async () => {
  fake = await startFakeOpenAiServer({
    latencyMs: 20,
    respond: (body) => respond(body) ?? genericResponder(body),
  })
  api = await startTestApi({
    llmProvider: "openai",
    worker: {
      model: (kysely) =>
        makeOpenAiModel({
          baseUrl: fake.baseUrl,
          model: "test-model",
          concurrency: 3,
          retryBaseMs: 10,
          cache: postgresResponseCache(kysely),
        }),
    },
  })
  a = api.client(await api.newKey("acme"))
  db = makeKysely(api.dbUrl, 2)
})

afterAll(async () => {
  await db?.destroy()
  await fake?.close()
})

/** Launches, waits for the run to end and returns its row. */
const launchAndWait = async (projectId: string) => {
  await launchRun(a, projectId)
  return db
    .selectFrom("runs")
    .selectAll()
    .where("project_id", "=", projectId)
    .orderBy("run_number", "desc")
    .executeTakeFirstOrThrow()
}

describe("the openai provider through a run", () => {
  let projectId: string
  let totalId: string

  beforeAll(async () => {
    projectId = await createProject(a)
    for (const [name, total] of [
      ["one.pdf", "$1,250.50"],
      ["two.pdf", "$980.00"],
    ] as const)
      await upload(
        a,
        projectId,
        name,
        await invoice({
          number: name,
          date: "May 1, 2024",
          seller: "Acme Supplies Inc.",
          currency: "USD",
          subtotal: "$0",
          tax: "$0",
          total,
        }),
      )
    await until("the condition", async () => {
      const r = await a.get(`/projects/${projectId}/documents/`)
      return r.body.every((d: any) => d.status === "Processed") ? true : undefined
    })
    const dims = await a.get(`/projects/${projectId}/dimensions/`)
    const documentDimension = dims.body.find((d: any) => d.source === "DOCUMENT").id
    const total = await a.post(`/projects/${projectId}/agents/`, {
      name: "Total Amount",
      extraction_instructions: "The total amount due",
      value_type: "number",
      dimensions: [{ dimension_id: documentDimension }],
    })
    totalId = total.body.id
    fake.reset()
  })

  it("extracts with structured output, normalises numbers and accounts for tokens", async () => {
    const run = await launchAndWait(projectId)
    expect(run.status).toBe("succeeded")
    const extractRequests = fake.requests.filter(
      (r) => r.body.response_format?.json_schema?.name === "extract_document",
    )
    expect(extractRequests).toHaveLength(2)
    for (const r of extractRequests) {
      expect(r.body.model).toBe("test-model")
      expect(r.body.response_format).toMatchObject({ type: "json_schema", json_schema: { strict: true } })
    }
    expect(run.model_calls).toBe(fake.completions)
    expect(Number(run.prompt_tokens)).toBeGreaterThan(0)
    expect(Number(run.completion_tokens)).toBeGreaterThan(0)

    const rows = (await a.get(`/projects/${projectId}/results/?agent_id=${totalId}`)).body.results
    const values = Object.fromEntries(
      rows.map((r: any) => [r.dimension_instances[0].dimension_value, r.resolution_result]),
    )
    expect(values["one.pdf"]).toMatchObject({ value: 1250.5, resolution_status: "Resolved" })
    expect(values["two.pdf"]).toMatchObject({ value: 980, resolution_status: "Resolved" })
    expect(Object.values(values["one.pdf"].references)).toEqual([["one.pdf", 2]])
  })

  it("answers a repeated request from the response cache, without a model call", async () => {
    const cached = await db.selectFrom("llm_cache").select("key").execute()
    expect(cached.length).toBeGreaterThanOrEqual(2)
    // A change and its reversal: the second launch asks exactly what the first asked.
    await a.patch(`/projects/${projectId}/agents/${totalId}/`, { extraction_instructions: "Something else" })
    await a.patch(`/projects/${projectId}/agents/${totalId}/`, {
      extraction_instructions: "The total amount due",
    })
    fake.reset()
    const run = await launchAndWait(projectId)
    expect(run.status).toBe("succeeded")
    expect(fake.requests).toHaveLength(0)
    expect(run.model_calls).toBe(0)
    expect(run.cache_hits).toBe(2)
  })

  it("lists the runs with the requests and tokens their tasks recorded", async () => {
    const rows = await db
      .selectFrom("runs")
      .selectAll()
      .where("project_id", "=", projectId)
      .orderBy("run_number", "desc")
      .execute()
    const r = await a.get(`/projects/${projectId}/runs/`)
    expect(r.status).toBe(200)
    expect(r.body.count).toBe(rows.length)
    expect(r.body.results.map((run: any) => run.number)).toEqual(rows.map((row) => row.run_number))
    for (const [i, row] of rows.entries())
      expect(r.body.results[i].usage).toEqual({
        requests: row.model_calls,
        cache_hits: row.cache_hits,
        input_tokens: Number(row.prompt_tokens),
        cached_input_tokens: 0,
        output_tokens: Number(row.completion_tokens),
      })
    const first = r.body.results.at(-1)
    expect(first).toMatchObject({ number: 1, status: "succeeded", extraction_pairs: 2, agents: [totalId] })
    expect(first.usage.requests).toBeGreaterThanOrEqual(2)
    expect(first.usage.input_tokens).toBeGreaterThan(0)
    expect(first.usage.output_tokens).toBeGreaterThan(0)
    // The relaunch asked what the first asked: answered from the cache.
    expect(r.body.results[0].usage).toMatchObject({ requests: 0, cache_hits: 2 })
    const preview = await a.get(`/projects/${projectId}/agents/launch/preview/`)
    expect(preview.body).toMatchObject({ provider: "openai", extraction_pairs: 0, model_requests: 0 })
  })

  it("the cache is shared through Postgres", async () => {
    const cache = postgresResponseCache(db)
    const [row] = await db.selectFrom("llm_cache").selectAll().limit(1).execute()
    expect(await Effect.runPromise(cache.get(row!.key))).toMatchObject({ content: row!.response })
  })
})

describe("automatic output mapping with the openai provider", () => {
  it("writes the generated agents' instructions with one structured call; names and mapping stay the planner's", async () => {
    const projectId = await createProject(a)
    fake.reset()
    const schema = {
      type: "object",
      properties: {
        invoice_number: { type: "string", description: "The invoice number" },
        total_due: { type: "number" },
      },
    }
    await a.put(`/projects/${projectId}/schema/`, { schema, auto_map: true })
    const done = await until("the mapping", async () => {
      const s = await a.get(`/projects/${projectId}/schema/`)
      return s.body.status === "pending" ? undefined : s.body
    })
    expect(done).toMatchObject({ status: "success", source: "llm" })
    const calls = fake.requests.filter((r) => r.body.response_format?.json_schema?.name === "describe_fields")
    expect(calls).toHaveLength(1)
    const sent = calls[0]!.body.messages?.find((m) => m.role === "user")?.content ?? ""
    expect(sent).toContain("The invoice number")
    const agents = (await a.get(`/projects/${projectId}/agents/`)).body
    const byName = Object.fromEntries(agents.map((x: any) => [x.name, x]))
    expect(byName["Invoice number"]).toMatchObject({
      extraction_instructions: "Model-written: find the invoice_number on the invoice.",
      value_type: "string",
    })
    // The model said "string"; the field is a number, so the agent stays a number agent.
    expect(byName["Total due"]).toMatchObject({
      extraction_instructions: "Model-written: find the total_due on the invoice.",
      value_type: "number",
      examples: "1200, 99.5",
    })
    expect(done.mapping.properties.total_due).toEqual({ kind: "scalar_from_agent", agent_name: "Total due" })
  })
})
