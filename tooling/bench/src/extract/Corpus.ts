/**
 * The labelled corpus as the service reads it: each file parsed by the backend the API would pick for it
 * (OCR for scans and photos), and each document's agents asked through the `local` provider's
 * `extractDocument`, the call the extraction stage makes. Parsed page texts are cached in the temp
 * folder (keyed by path, size and modification time) so reruns spend their time on extraction.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { backendFor, defaultLimits } from "@dxs/pipeline"
import type { AgentSpec, PageText, ValueType } from "@dxs/pipeline/llm/LanguageModel"
import { localModel } from "@dxs/pipeline/llm/Local"
import { terminateOcr } from "@dxs/pipeline/parsing/Ocr"
import { Effect } from "effect"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..")
export const labelled = path.join(root, "../shared/corpus/labelled")
const REFERENCE_DATE = "2024-01-01"

export const agent = (
  id: string,
  name: string,
  extractionInstructions: string,
  valueType: ValueType = "string",
  examples = "",
): AgentSpec => ({
  id,
  name,
  extractionInstructions,
  valueType,
  unit: "",
  examples,
  inconsistencyInstructions: "",
  resolutionInstructions: "",
  enableComplexCalculations: false,
  valueIfNotFound: "",
  derivedPrompt: "",
  isEvaluation: false,
})

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".pdf": "application/pdf",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".png": "image/png",
}

/** A page as the pipeline gives it to the extractor: its text and its tables. */
export type Page = Pick<PageText, "text" | "tables">

type PageCache = Record<string, { readonly stamp: string; readonly pages: ReadonlyArray<Page> }>

export interface Corpus {
  /** The pages of a file, parsed by its backend (or from the cache); undefined when it cannot be read. */
  readonly pagesOf: (file: string) => Promise<ReadonlyArray<Page> | undefined>
  /** The first value each agent answers for the document, by agent id (agents without an answer are absent). */
  readonly extract: (
    agents: ReadonlyArray<AgentSpec>,
    name: string,
    pages: ReadonlyArray<Page>,
  ) => ReadonlyMap<string, string>
  /** Saves the cache and stops the OCR engine. */
  readonly close: () => Promise<void>
  readonly stats: () => {
    readonly parsed: number
    readonly parseMs: number
    readonly pairs: number
    readonly extractMs: number
  }
}

/**
 * Another reader of files than the service's parsers (bench:ocr reads the receipts with a second OCR engine),
 * with a cache of its own.
 */
export interface Reader {
  readonly name: string
  readonly read: (file: string) => Promise<ReadonlyArray<string>>
}

export const openCorpus = (useCache: boolean, reader?: Reader): Corpus => {
  const cacheFile = path.join(os.tmpdir(), `dxs-bench-extract-pages${reader ? `-${reader.name}` : ""}.json`)
  const cache: PageCache =
    useCache && existsSync(cacheFile) ? JSON.parse(readFileSync(cacheFile, "utf8")) : {}
  let parseMs = 0
  let parsed = 0
  let extractMs = 0
  let pairs = 0

  const pagesOf = async (file: string): Promise<ReadonlyArray<Page> | undefined> => {
    const stat = statSync(file)
    const stamp = `${stat.size}:${stat.mtimeMs}`
    const hit = cache[file]
    if (hit && hit.stamp === stamp) return hit.pages
    const backend = backendFor(file)
    if (!backend) return undefined
    const t = performance.now()
    try {
      if (reader) {
        const pages = (await reader.read(file)).map((text) => ({ text, tables: [] }))
        cache[file] = { stamp, pages }
        parsed += 1
        return pages
      }
      const out = await Effect.runPromise(
        backend.parse({
          bytes: readFileSync(file),
          fileName: path.basename(file),
          contentType: CONTENT_TYPES[path.extname(file).toLowerCase()] ?? "application/octet-stream",
          limits: defaultLimits,
          tools: { libreOffice: undefined, tempDir: os.tmpdir() },
        }),
      )
      const pages = out.pages.map((p) => ({ text: p.text, tables: p.tables ?? [] }))
      cache[file] = { stamp, pages }
      parsed += 1
      if (parsed % 25 === 0 && useCache) writeFileSync(cacheFile, JSON.stringify(cache))
      return pages
    } catch (e) {
      console.log(`  parse failed: ${path.basename(file)}: ${(e as Error).message}`)
      return undefined
    } finally {
      parseMs += performance.now() - t
    }
  }

  const extract = (agents: ReadonlyArray<AgentSpec>, name: string, read: ReadonlyArray<Page>) => {
    const pages = read.map(
      (p, i): PageText => ({ documentId: name, documentName: name, pageNumber: i + 1, ...p }),
    )
    const t = performance.now()
    const response = Effect.runSync(
      localModel.extractDocument({
        document: { id: name, name },
        pages,
        agents: agents.map((agent) => ({ agent, dimensions: [] })),
        referenceDate: REFERENCE_DATE,
      }),
    )
    extractMs += performance.now() - t
    pairs += agents.length
    const out = new Map<string, string>()
    for (const a of response.agents) {
      const value = a.values[0]?.value
      if (value !== undefined) out.set(a.agentId, value)
    }
    return out
  }

  const close = async () => {
    if (useCache && parsed > 0) writeFileSync(cacheFile, JSON.stringify(cache))
    await terminateOcr()
  }

  return { pagesOf, extract, close, stats: () => ({ parsed, parseMs, pairs, extractMs }) }
}

/** Precision, recall and F1 of `tp` right answers out of `pred` answers for `gold` expected values. */
export const prf = (tp: number, pred: number, gold: number) => {
  const p = pred ? tp / pred : 0
  const r = gold ? tp / gold : 0
  return { p, r, f1: p + r ? (2 * p * r) / (p + r) : 0 }
}
