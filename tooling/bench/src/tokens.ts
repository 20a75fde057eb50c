/**
 * Model cost per extracted value: Kleister-NDA train documents (`../shared/corpus/labelled`) uploaded
 * through the REST API of a real `dxs start all` (compiled, over a fresh database), 8 agents split by the
 * Document dimension, `LLM_PROVIDER=openai` against a fake OpenAI-compatible server on loopback that counts
 * every request and the characters of its messages, and answers each structured-output request with a
 * minimal answer valid for its JSON schema. One launch, then, from that run:
 *
 * - documents, agents, extracted values (documents × agents), model requests, characters sent, characters
 *   and requests per value, and the prompt tokens the run reports (`GET …/runs/`);
 * - the baseline of whole-document-per-field prompting of the same documents, from their page texts as read
 *   back through `GET …/pages/{n}/`: Σ documents × agents (document characters + that field's
 *   instructions), one request per value;
 * - the ratio of characters per value to the baseline's, and PASS/FAIL against the targets
 *   (≤ 0.2× the baseline's characters per value, ≤ 0.2 requests per value).
 *
 * It is a report: it exits 0 either way.
 * Usage: pnpm bench:tokens [--documents 20] (the first N files of the folder, by name; 254 at most)
 * Uses DATABASE_URL's server when set (a fresh database, dropped afterwards), else an embedded server.
 */
import { readdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import {
  type ChatCompletionRequestBody,
  type FakeOpenAiServer,
  genericResponder,
  startFakeOpenAiServer,
} from "@dxs/testing/FakeOpenAiServer"
import { createKey, dxsEnv, option, printRows, repoRoot, startAll, startDatabase } from "./common/project.ts"

const ndaDir = path.join(repoRoot, "../shared/corpus/labelled/kleister-nda-train/documents")
const DOCUMENTS = option("documents", 20)
const PHASE_LIMIT_MS = 30 * 60_000
const TARGET_CHARACTER_RATIO = 0.2
const TARGET_REQUESTS_PER_VALUE = 0.2

/** The Kleister-NDA fields (party, jurisdiction, effective date, term) and four more an NDA reviewer asks for. */
const AGENTS: ReadonlyArray<{ readonly name: string; readonly instructions: string; readonly type: string }> =
  [
    {
      name: "Parties",
      instructions: "The parties between whom the agreement is made (companies or persons)",
      type: "string",
    },
    {
      name: "Jurisdiction",
      instructions: "The state or country whose laws govern the agreement",
      type: "string",
    },
    { name: "Effective date", instructions: "The date the agreement is dated or takes effect", type: "date" },
    { name: "Term", instructions: "How long the agreement lasts (its term or duration)", type: "string" },
    {
      name: "Confidentiality period",
      instructions: "How long the confidentiality obligations survive after the agreement ends",
      type: "string",
    },
    {
      name: "Purpose",
      instructions: "The purpose for which confidential information is disclosed",
      type: "string",
    },
    {
      name: "Signatories",
      instructions: "The names of the persons who signed the agreement",
      type: "string",
    },
    {
      name: "Notice address",
      instructions: "The address to which notices under the agreement are sent",
      type: "string",
    },
  ]

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Characters of a request's messages (string contents, or the text of content parts). */
const messageCharacters = (body: ChatCompletionRequestBody): number =>
  (body.messages ?? []).reduce((n, message) => {
    const content = message.content as unknown
    if (typeof content === "string") return n + content.length
    if (Array.isArray(content))
      return (
        n +
        content.reduce(
          (m: number, part: { text?: unknown }) =>
            m + (typeof part?.text === "string" ? part.text.length : 0),
          0,
        )
      )
    return n
  }, 0)

const client = (api: string, key: string) => {
  const call = async (method: string, url: string, body?: unknown): Promise<any> => {
    const init: RequestInit = { method, headers: { "x-api-key": key } }
    if (body instanceof FormData) init.body = body
    else if (body !== undefined) {
      init.body = JSON.stringify(body)
      init.headers = { ...init.headers, "content-type": "application/json" }
    }
    const r = await fetch(`${api}${url}`, init)
    const text = await r.text()
    if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${text.slice(0, 500)}`)
    return text === "" ? undefined : JSON.parse(text)
  }
  return {
    get: (url: string) => call("GET", url),
    post: (url: string, body?: unknown) => call("POST", url, body),
  }
}

const until = async <T>(what: string, f: () => Promise<T | undefined>): Promise<T> => {
  const deadline = Date.now() + PHASE_LIMIT_MS
  for (;;) {
    const v = await f()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(250)
  }
}

const main = async () => {
  let files: Array<string>
  try {
    files = readdirSync(ndaDir)
      .filter((f) => f.endsWith(".pdf"))
      .sort()
      .slice(0, DOCUMENTS)
  } catch {
    console.log(`skipped: the labelled corpus is not at ${ndaDir}`)
    return
  }
  const database = await startDatabase()
  let fake: FakeOpenAiServer | undefined
  let server: Awaited<ReturnType<typeof startAll>> | undefined
  try {
    fake = await startFakeOpenAiServer({ latencyMs: 0, respond: genericResponder })
    const env = {
      ...dxsEnv(database.url),
      LLM_PROVIDER: "openai",
      OPENAI_BASE_URL: fake.baseUrl,
      OPENAI_API_KEY: "bench",
      OPENAI_MODEL: "bench-model",
      LLM_CONCURRENCY: "8",
      WORKER_CONCURRENCY: "12",
    }
    const key = await createKey(env, "bench tokens")
    server = await startAll(env)
    const api = client(server.api, key)

    const project = await api.post("/projects/", {
      name: "Kleister NDA tokens",
      auto_attach_document_dimension: true,
    })
    const t0 = Date.now()
    const documentIds: Array<string> = []
    for (const file of files) {
      const form = new FormData()
      form.append("file", new Blob([readFileSync(path.join(ndaDir, file))]), file)
      documentIds.push((await api.post(`/projects/${project.id}/documents/`, form)).id)
    }
    const documents: Array<any> = await until("the documents to be parsed", async () => {
      const list: Array<any> = await api.get(`/projects/${project.id}/documents/`)
      return list.every((d) => d.status !== "Pending") ? list : undefined
    })
    const processed = documents.filter((d) => d.status === "Processed")
    console.log(
      `${files.length} documents uploaded and parsed in ${((Date.now() - t0) / 1000).toFixed(1)} s (${processed.length} processed)`,
    )
    if (processed.length !== documents.length)
      console.log(`note: ${documents.length - processed.length} failed processing and are left out`)
    for (const agent of AGENTS)
      await api.post(`/projects/${project.id}/agents/`, {
        name: agent.name,
        extraction_instructions: agent.instructions,
        value_type: agent.type,
      })

    // The page texts as the API gives them back: the baseline's document characters.
    let pages = 0
    const documentCharacters: Array<number> = []
    for (const d of processed) {
      let characters = 0
      for (let n = 1; n <= d.page_count; n++)
        characters += (await api.get(`/projects/${project.id}/documents/${d.id}/pages/${n}/`)).text.length
      pages += d.page_count
      documentCharacters.push(characters)
    }
    const preview = await api.get(`/projects/${project.id}/agents/launch/preview/`)

    fake.reset()
    const launched = Date.now()
    await api.post(`/projects/${project.id}/agents/launch/`)
    const run = await until("the run to end", async () => {
      const status = await api.get(`/projects/${project.id}/status/`)
      if (status.pipeline_running) return undefined
      const runs = await api.get(`/projects/${project.id}/runs/?limit=1`)
      const latest = runs.results[0]
      return latest?.status === "succeeded" || latest?.status === "failed" ? latest : undefined
    })
    const runSeconds = (Date.now() - launched) / 1000
    if (run.status !== "succeeded") console.log(`the run failed: ${run.failure_reason}`)

    const requests = fake.requests.length
    const characters = fake.requests.reduce((n, r) => n + messageCharacters(r.body), 0)
    const values = processed.length * AGENTS.length
    const instructions = AGENTS.reduce((n, a) => n + a.name.length + a.instructions.length, 0)
    const baselineCharacters =
      documentCharacters.reduce((n, c) => n + c * AGENTS.length, 0) + processed.length * instructions
    const perValue = characters / values
    const baselinePerValue = baselineCharacters / values
    const ratio = perValue / baselinePerValue
    const requestsPerValue = requests / values
    const f = (n: number, digits = 0) =>
      n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
    printRows([
      ["documents", `${processed.length} (${pages} pages)`],
      ["agents", `${AGENTS.length} (split by Document)`],
      ["extracted values (documents × agents)", f(values)],
      ["run", `${run.status} in ${f(runSeconds, 1)} s`],
      ["model requests", f(requests)],
      ["characters sent (messages)", f(characters)],
      ["characters per value", f(perValue)],
      ["requests per value", f(requestsPerValue, 3)],
      ["prompt tokens reported (GET …/runs/)", f(run.usage.input_tokens)],
      ["  of which cached", f(run.usage.cached_input_tokens)],
      ["completion tokens reported", f(run.usage.output_tokens)],
      [
        "preview before the launch",
        `${f(preview.model_requests)} requests, ${f(preview.estimated_input_tokens)} input tokens estimated`,
      ],
      ["baseline: whole document per field", `${f(baselineCharacters)} characters, ${f(values)} requests`],
      ["baseline characters per value", f(baselinePerValue)],
      ["characters per value / baseline", `${f(ratio, 2)}× (target <= ${TARGET_CHARACTER_RATIO}×)`],
      ["requests per value", `${f(requestsPerValue, 3)} (target <= ${TARGET_REQUESTS_PER_VALUE})`],
    ])
    const pass = ratio <= TARGET_CHARACTER_RATIO && requestsPerValue <= TARGET_REQUESTS_PER_VALUE
    console.log(
      `\n${pass ? "PASS" : "FAIL"}: ${f(ratio, 2)}× the baseline's characters per value (<= ${TARGET_CHARACTER_RATIO}×), ${f(requestsPerValue, 3)} requests per value (<= ${TARGET_REQUESTS_PER_VALUE})`,
    )
  } finally {
    await server?.stop()
    await fake?.close()
    await database.stop()
  }
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
