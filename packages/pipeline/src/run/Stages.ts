/**
 * The pipeline's stages as task handlers over the `LanguageModel` service (DESIGN §3):
 * - `extract`: one agent/document pair — retrieval, discovery of dynamic dimension values, extraction
 *   (value, verbatim passage, reasoning, page) per combination of dimension values;
 * - `resolve`: one extraction agent — consistency across documents, then one resolved value per atomic
 *   value (agent × dimension values) with status, references and sources;
 * - `derive`: one derived or evaluation agent over the resolved values it references.
 * Web search (an agent with `enable_web_search`, when a search provider is configured) is part of
 * `resolve`: per atomic value, the search's hits are read like pages of a document, and what the model
 * finds there joins the document extractions as `web` candidates of consistency and resolution.
 * Model calls happen outside transactions; each task writes its results, its usage, its completion and
 * (maybe) the next phase of the run in one transaction, replacing what an earlier attempt wrote, so a
 * re-executed task neither loses nor duplicates anything.
 */
import { randomUUID } from "node:crypto"
import type { StoredDimensionValue, TaskRow, WebCitation } from "@dxs/db"
import type { TaskDb, TaskTrx } from "@dxs/db/TaskQueue"
import { cartesian, dimensionKey } from "@dxs/domain/Combinations"
import { parseNumber } from "@dxs/domain/Values"
import { Effect } from "effect"
import { sql } from "kysely"
import {
  addUsage,
  type CandidateExtraction,
  type DerivedInput,
  type ExtractedValue,
  LanguageModel,
  type LanguageModelShape,
  noUsage,
  type PageText,
  type Usage,
} from "../llm/LanguageModel.ts"
import { pagesForExtraction } from "../retrieval/Retrieval.ts"
import type { WebSearchResult, WebSearchShape } from "../websearch/WebSearch.ts"
import {
  type AttachedDimension,
  agentDimensionsKey,
  agentSpec,
  dimensionQuery,
  loadAgents,
  loadDocuments,
  type ProjectAgent,
  type ProjectDocument,
} from "./ProjectState.ts"
import { advanceAfterTask, type RunTaskContext } from "./Runs.ts"

export interface StageContext extends RunTaskContext {
  readonly signal: AbortSignal
}

export interface StageOptions {
  readonly model: LanguageModelShape
  /** The search provider of agents with `enable_web_search`; undefined: web search is not configured. */
  readonly webSearch?: WebSearchShape | undefined
}

const runModel = <A, E>(
  options: StageOptions,
  effect: Effect.Effect<A, E, LanguageModel>,
  signal: AbortSignal,
) => Effect.runPromise(Effect.provideService(effect, LanguageModel, options.model), { signal })

interface RunInfo {
  readonly projectId: string
  readonly referenceDate: string
}

/** The run if it is running (else the task has nothing to do), with the project's reference date. */
const runningRun = async (db: TaskDb, runId: string): Promise<RunInfo | undefined> => {
  const row = await db
    .selectFrom("runs as r")
    .innerJoin("projects as p", "p.id", "r.project_id")
    .select([
      "r.status",
      "r.project_id",
      sql<string>`coalesce(p.reference_date, p.created_at::date)::text`.as("reference_date"),
    ])
    .where("r.id", "=", runId)
    .executeTakeFirst()
  return row?.status === "running"
    ? { projectId: row.project_id, referenceDate: row.reference_date }
    : undefined
}

/**
 * Writes a task's results, its completion and the model usage it cost in one transaction; then, after the
 * commit, moves the run on if this was the phase's last task (see `advanceAfterTask`). No lock on the run
 * is held while the results are written, so the tasks of a run commit side by side.
 */
const commitTask = async (
  ctx: StageContext,
  task: TaskRow,
  runId: string,
  usage: Usage,
  write: (trx: TaskTrx) => Promise<void>,
): Promise<void> => {
  await ctx.db.transaction().execute(async (trx) => {
    await write(trx)
    await ctx.complete(trx)
    if (usage.calls + usage.cacheHits + usage.promptTokens + usage.completionTokens > 0)
      await trx
        .updateTable("tasks")
        .set({ usage: JSON.stringify(usage) })
        .where("id", "=", task.id)
        .execute()
  })
  await advanceAfterTask(ctx.db, runId)
}

/** A still-current agent row (same config version), share-locked until the transaction ends. */
const agentStillAt = async (trx: TaskTrx, agentId: string, configVersion: number) => {
  const row = await trx
    .selectFrom("agents")
    .select("config_version")
    .where("id", "=", agentId)
    .forShare()
    .executeTakeFirst()
  return row?.config_version === configVersion
}

// ---------------------------------------------------------------------------------------------------------
// Dimension instances and atomic values

interface InstanceRef {
  readonly dimension: AttachedDimension
  readonly value: string
  readonly documentId: string | null
}

/**
 * The atomic value of an agent for one combination of dimension instances, created when missing. Run
 * outside the task's final transaction (`insert … on conflict do nothing`, then a read), so no task
 * holds a lock on a row that all tasks of the agent share.
 */
const ensureAtomicValue = async (
  trx: TaskTrx | TaskDb,
  projectId: string,
  agentId: string,
  instances: ReadonlyArray<InstanceRef>,
): Promise<{ id: string; dimensionValues: ReadonlyArray<StoredDimensionValue> }> => {
  const stored: Array<StoredDimensionValue> = []
  for (const instance of instances) {
    const row = await trx
      .insertInto("dimension_instances")
      .values({
        dimension_id: instance.dimension.dimensionId,
        value: instance.value,
        document_id: instance.documentId,
      })
      .onConflict((oc) => oc.columns(["dimension_id", "value", "document_id"]).doNothing())
      .returning("id")
      .executeTakeFirst()
      .then(
        (inserted) =>
          inserted ??
          trx
            .selectFrom("dimension_instances")
            .select("id")
            .where("dimension_id", "=", instance.dimension.dimensionId)
            .where("value", "=", instance.value)
            .where((eb) =>
              instance.documentId === null
                ? eb("document_id", "is", null)
                : eb("document_id", "=", instance.documentId),
            )
            .executeTakeFirstOrThrow(),
      )
    stored.push({
      id: row.id,
      dimension_id: instance.dimension.dimensionId,
      name: instance.dimension.name,
      dimension_value: instance.value,
      document_id: instance.documentId,
    })
  }
  const key = dimensionKey(stored.map((s) => s.id))
  const atomic = await trx
    .insertInto("atomic_values")
    .values({
      project_id: projectId,
      agent_id: agentId,
      dimension_key: key,
      dimension_values: JSON.stringify(stored),
    })
    .onConflict((oc) => oc.columns(["agent_id", "dimension_key"]).doNothing())
    .returning("id")
    .executeTakeFirst()
    .then(
      (inserted) =>
        inserted ??
        trx
          .selectFrom("atomic_values")
          .select("id")
          .where("agent_id", "=", agentId)
          .where("dimension_key", "=", key)
          .executeTakeFirstOrThrow(),
    )
  return { id: atomic.id, dimensionValues: stored }
}

const instanceFor = (dimension: AttachedDimension, value: string, document: ProjectDocument | undefined) => ({
  dimension,
  value,
  documentId: dimension.source === "DOCUMENT" ? (document?.id ?? null) : null,
})

// ---------------------------------------------------------------------------------------------------------
// extract

interface ExtractPayload {
  readonly runId: string
  readonly agentId: string
  readonly agentConfigVersion: number
  readonly documentId: string
  readonly documentVersion: number
  readonly dimensionsKey: string
}

export const extractHandler =
  (options: StageOptions) =>
  async (task: TaskRow, ctx: StageContext): Promise<void> => {
    const p = task.payload as unknown as ExtractPayload
    const run = await runningRun(ctx.db, p.runId)
    if (!run) return
    const [[agent], [document]] = await Promise.all([
      loadAgents(ctx.db, run.projectId, p.agentId),
      loadDocuments(ctx.db, run.projectId, p.documentId),
    ])
    const current =
      agent !== undefined &&
      !agent.row.is_draft &&
      agent.row.config_version === p.agentConfigVersion &&
      document !== undefined &&
      document.status === "Processed" &&
      document.version === p.documentVersion

    let values: ReadonlyArray<ExtractedValue> = []
    let usage = noUsage
    if (current) {
      const spec = agentSpec(agent.row)
      const pages = await pagesForExtraction(ctx.db, {
        agent: {
          name: spec.name,
          extractionInstructions: spec.extractionInstructions,
          examples: spec.examples,
        },
        documentId: document.id,
        documentName: document.name,
      })
      const found = await runModel(
        options,
        Effect.gen(function* () {
          const model = yield* LanguageModel
          let spent = noUsage
          const discovered = new Map<string, ReadonlyArray<string>>()
          for (const dimension of agent.dimensions) {
            if (dimension.source !== "CUSTOM" || !dimension.areValuesDynamic) continue
            const r = yield* model.discoverDimensionValues({
              agent: spec,
              dimension: dimensionQuery(dimension, document),
              document: { id: document.id, name: document.name },
              pages,
            })
            spent = addUsage(spent, r.usage)
            discovered.set(dimension.dimensionId, r.values)
          }
          const dimensions = agent.dimensions.map((d) =>
            dimensionQuery(d, document, discovered.get(d.dimensionId)),
          )
          // A dimension with no value for this document (a tag it lacks, nothing discovered): nothing to ask.
          if (pages.length === 0 || dimensions.some((d) => d.values.length === 0))
            return { values: [] as ReadonlyArray<ExtractedValue>, usage: spent }
          const r = yield* model.extract({
            agent: spec,
            document: { id: document.id, name: document.name },
            pages,
            dimensions,
            referenceDate: run.referenceDate,
          })
          return { values: r.values, usage: addUsage(spent, r.usage) }
        }),
        ctx.signal,
      )
      values = found.values
      usage = found.usage
    }

    const atomicIds: Array<string | undefined> = []
    if (current)
      for (const value of values) {
        const instances = agent.dimensions.map((d) => {
          const v = value.dimensionValues[d.dimensionId]
          return v === undefined ? undefined : instanceFor(d, v, document)
        })
        atomicIds.push(
          instances.some((i) => i === undefined)
            ? undefined
            : (await ensureAtomicValue(ctx.db, run.projectId, agent.row.id, instances as Array<InstanceRef>))
                .id,
        )
      }
    await commitTask(ctx, task, p.runId, usage, async (trx) => {
      if (current && (await agentStillAt(trx, agent.row.id, p.agentConfigVersion))) {
        await trx
          .deleteFrom("extractions")
          .where("agent_id", "=", agent.row.id)
          .where("document_id", "=", document.id)
          .where("source_type", "=", "document")
          .execute()
        let written = 0
        for (const [index, value] of values.entries()) {
          const atomicValueId = atomicIds[index]
          if (atomicValueId === undefined) continue
          await trx
            .insertInto("extractions")
            .values({
              project_id: run.projectId,
              agent_id: agent.row.id,
              agent_config_version: p.agentConfigVersion,
              atomic_value_id: atomicValueId,
              document_id: document.id,
              value: value.value,
              relevant_passage: value.relevantPassage,
              reasoning: value.reasoning,
              page_number: value.pageNumber,
              source_type: "document",
            })
            .execute()
          written += 1
        }
        await trx
          .insertInto("extraction_pairs")
          .values({
            agent_id: agent.row.id,
            document_id: document.id,
            agent_config_version: p.agentConfigVersion,
            document_version: p.documentVersion,
            dimensions_key: agentDimensionsKey(agent),
            value_count: written,
          })
          .onConflict((oc) =>
            oc.columns(["agent_id", "document_id"]).doUpdateSet({
              agent_config_version: p.agentConfigVersion,
              document_version: p.documentVersion,
              dimensions_key: agentDimensionsKey(agent),
              value_count: written,
              extracted_at: sql`now()`,
            }),
          )
          .execute()
      }
    })
  }

// ---------------------------------------------------------------------------------------------------------
// The combinations an agent should have a result for

/**
 * Per dimension, the instances a result is expected for: static values; the Document dimension's
 * processed documents; the tag values of processed documents; dynamic values found by extraction.
 */
const expectedCombinations = (
  agent: ProjectAgent,
  documents: ReadonlyArray<ProjectDocument>,
  discovered: ReadonlyArray<StoredDimensionValue>,
): ReadonlyArray<ReadonlyArray<InstanceRef>> => {
  const processed = documents.filter((d) => d.status === "Processed")
  const lists = agent.dimensions.map((dimension): ReadonlyArray<InstanceRef> => {
    if (dimension.source === "DOCUMENT") return processed.map((d) => instanceFor(dimension, d.name, d))
    if (dimension.source === "TAG") {
      const key = dimension.tagKey ?? dimension.name
      const values = [
        ...new Set(processed.map((d) => d.tags[key]).filter((v): v is string => v !== undefined)),
      ]
      return values.map((v) => instanceFor(dimension, v, undefined))
    }
    if (dimension.areValuesDynamic) {
      const values = [
        ...new Set(
          discovered.filter((s) => s.dimension_id === dimension.dimensionId).map((s) => s.dimension_value),
        ),
      ]
      return values.map((v) => instanceFor(dimension, v, undefined))
    }
    return [...new Set(dimension.values)].map((v) => instanceFor(dimension, v, undefined))
  })
  return cartesian(lists)
}

const resultName = (agentName: string, instances: ReadonlyArray<InstanceRef>) =>
  instances.length === 0 ? agentName : instances.map((i) => i.value).join(" / ")

/** A value as stored in `resolution_results.value`: a JSON number for number agents. */
const storedValue = (valueType: string, value: string | null): unknown => {
  if (value === null) return null
  if (valueType === "number") {
    const n = parseNumber(value)
    return n === undefined ? value : n
  }
  return value
}

const currentAtomicValues = async (db: TaskDb | TaskTrx, agentId: string, configVersion: number) =>
  db
    .selectFrom("atomic_values as av")
    .select(["av.id", "av.dimension_values"])
    .where("av.agent_id", "=", agentId)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom("extractions as e")
          .select("e.id")
          .whereRef("e.atomic_value_id", "=", "av.id")
          .where("e.agent_config_version", "=", configVersion),
      ),
    )
    .execute()

interface WebSupplement {
  readonly text: string
  readonly sources: ReadonlyArray<{ url: string; title: string }>
}

interface ResolvedRow {
  readonly atomicValueId: string
  readonly resultName: string
  readonly value: unknown
  readonly status: string
  readonly justification: string
  readonly references: Record<string, readonly [string, number | null]>
  readonly sources: ReadonlyArray<{
    document_name: string
    page_number: number
    document_id: string
    atomic_value_ids: string[]
  }>
  readonly sourceType: string
  /** What the web contributed to the value; null when nothing did. */
  readonly webSupplement: WebSupplement | null
  readonly verdicts: ReadonlyArray<{ id: string; consistent: boolean; justification: string }>
  readonly summary: string | null
}

const writeResults = async (
  trx: TaskTrx,
  projectId: string,
  agent: ProjectAgent,
  rows: ReadonlyArray<ResolvedRow>,
) => {
  const configVersion = agent.row.config_version
  for (const row of rows) {
    for (const v of row.verdicts)
      await trx
        .updateTable("extractions")
        .set({ consistent: v.consistent, justification_for_consistency: v.justification })
        .where("id", "=", v.id)
        .execute()
    const fresh = {
      result_name: row.resultName,
      value: JSON.stringify(row.value),
      resolution_status: row.status,
      justification: row.justification,
      references: JSON.stringify(row.references),
      sources: JSON.stringify(row.sources),
      source_type: row.sourceType,
      is_web_supplement: row.webSupplement !== null,
      web_supplement: row.webSupplement === null ? null : JSON.stringify(row.webSupplement),
    }
    await trx
      .insertInto("resolution_results")
      .values({
        project_id: projectId,
        agent_id: agent.row.id,
        agent_config_version: configVersion,
        atomic_value_id: row.atomicValueId,
        ...fresh,
      })
      .onConflict((oc) =>
        oc.column("atomic_value_id").doUpdateSet((eb) => ({
          // A value set by hand at this config version is kept; citations are refreshed.
          result_name: row.resultName,
          references: JSON.stringify(row.references),
          sources: JSON.stringify(row.sources),
          source_type: row.sourceType,
          is_web_supplement: row.webSupplement !== null,
          web_supplement: row.webSupplement === null ? null : JSON.stringify(row.webSupplement),
          value: sql`case when ${eb.ref("resolution_results.is_overridden")} and ${eb.ref("resolution_results.agent_config_version")} = ${configVersion} then resolution_results.value else ${JSON.stringify(row.value)}::jsonb end`,
          resolution_status: sql`case when ${eb.ref("resolution_results.is_overridden")} and ${eb.ref("resolution_results.agent_config_version")} = ${configVersion} then resolution_results.resolution_status else ${row.status} end`,
          justification: sql`case when ${eb.ref("resolution_results.is_overridden")} and ${eb.ref("resolution_results.agent_config_version")} = ${configVersion} then resolution_results.justification else ${row.justification} end`,
          is_overridden: sql`${eb.ref("resolution_results.is_overridden")} and ${eb.ref("resolution_results.agent_config_version")} = ${configVersion}`,
          updated_by_email: sql`case when ${eb.ref("resolution_results.agent_config_version")} = ${configVersion} then resolution_results.updated_by_email else null end`,
          agent_config_version: configVersion,
          updated_at: sql`now()`,
        })),
      )
      .execute()
  }
  // Results of combinations that no longer exist (a removed static value, a deleted document) go.
  const keep = rows.map((r) => r.atomicValueId)
  let stale = trx.deleteFrom("resolution_results").where("agent_id", "=", agent.row.id)
  if (keep.length > 0) stale = stale.where("atomic_value_id", "not in", keep)
  await stale.execute()
  const summaries = rows.map((r) => r.summary).filter((s): s is string => s !== null)
  await trx
    .updateTable("agents")
    .set({
      inconsistency_summary: summaries.length === 0 ? null : summaries.join("\n"),
      requires_attention: rows.some((r) => r.status === "Requires attention"),
    })
    .where("id", "=", agent.row.id)
    .execute()
  await trx
    .insertInto("agent_resolutions")
    .values({ agent_id: agent.row.id, agent_config_version: configVersion, complete: true })
    .onConflict((oc) =>
      oc
        .column("agent_id")
        .doUpdateSet({ agent_config_version: configVersion, complete: true, resolved_at: sql`now()` }),
    )
    .execute()
}

// ---------------------------------------------------------------------------------------------------------
// resolve

interface AgentPayload {
  readonly runId: string
  readonly agentId: string
}

const notFoundText = (agent: ProjectAgent) => agent.row.value_if_not_found.trim() || "n/a"

/** Search engines answer short queries best. */
const MAX_QUERY_CHARS = 300

/** The search of one atomic value: the agent's name and instructions, and the result's name when dimensioned. */
const webQuery = (agent: ProjectAgent, instances: ReadonlyArray<InstanceRef>): string =>
  [
    agent.row.name,
    agent.row.extraction_instructions,
    instances.length === 0 ? "" : resultName(agent.row.name, instances),
  ]
    .map((part) => part.replace(/\s+/g, " ").trim())
    .filter((part) => part !== "")
    .join(" ")
    .slice(0, MAX_QUERY_CHARS)
    .trim()

/** A value found on the web, stored as a `web` extraction with this id. */
interface WebFinding {
  readonly id: string
  readonly value: string
  readonly relevantPassage: string
  readonly reasoning: string
  readonly query: string
  readonly searchedAt: Date
  readonly source: { readonly url: string; readonly title: string }
}

/** A hit's name where a document name would be: its title, else its address. */
const hitName = (hit: WebSearchResult) => hit.title || hit.url

/**
 * One atomic value's web search: the hits (those with text) are read by the model as the pages of one
 * document, with the agent's own instructions; every value it finds is tied back to the hit it is on.
 */
const searchWeb = async (
  options: StageOptions,
  webSearch: WebSearchShape,
  request: { readonly atomicValueId: string; readonly query: string; readonly referenceDate: string },
  spec: ReturnType<typeof agentSpec>,
  signal: AbortSignal,
): Promise<{
  readonly hits: number
  readonly findings: ReadonlyArray<WebFinding>
  readonly usage: Usage
}> => {
  const searchedAt = new Date()
  const hits = await webSearch.search(request.query, { signal })
  const readable = hits.filter((hit) => hit.content !== "")
  if (readable.length === 0) return { hits: hits.length, findings: [], usage: noUsage }
  const document = { id: `web:${request.atomicValueId}`, name: `Web search results for "${request.query}"` }
  const pages: Array<PageText> = readable.map((hit, i) => ({
    documentId: document.id,
    documentName: hitName(hit),
    pageNumber: i + 1,
    text: hit.content,
  }))
  const r = await runModel(
    options,
    Effect.flatMap(LanguageModel, (model) =>
      model.extract({ agent: spec, document, pages, dimensions: [], referenceDate: request.referenceDate }),
    ),
    signal,
  )
  const findings = r.values.flatMap((v): Array<WebFinding> => {
    const hit = readable[v.pageNumber - 1]
    if (hit === undefined) return []
    return [
      {
        id: randomUUID(),
        value: v.value,
        relevantPassage: v.relevantPassage,
        reasoning: v.reasoning,
        query: request.query,
        searchedAt,
        source: { url: hit.url, title: hitName(hit) },
      },
    ]
  })
  return { hits: hits.length, findings, usage: r.usage }
}

/** A candidate of consistency and resolution: a stored document extraction or a fresh web finding. */
interface Candidate {
  readonly candidate: CandidateExtraction
  readonly documentId: string | null
  readonly web: WebFinding | undefined
}

/** The result's provenance: which kinds of source its cited extractions are. */
const provenance = (
  cited: ReadonlyArray<Candidate>,
): { readonly sourceType: string; readonly webSupplement: WebSupplement | null } => {
  const web = cited.flatMap((c) => (c.web === undefined ? [] : [c.web]))
  const fromDocuments = cited.some((c) => c.web === undefined)
  if (web.length === 0) return { sourceType: "document", webSupplement: null }
  const sources = new Map<string, { url: string; title: string }>()
  for (const w of web) if (!sources.has(w.source.url)) sources.set(w.source.url, { ...w.source })
  const text = [...new Set(web.map((w) => w.relevantPassage.trim()).filter((t) => t !== ""))].join("\n")
  return {
    sourceType: fromDocuments ? "document_and_web" : "web",
    webSupplement: { text, sources: [...sources.values()] },
  }
}

export const resolveHandler =
  (options: StageOptions) =>
  async (task: TaskRow, ctx: StageContext): Promise<void> => {
    const p = task.payload as unknown as AgentPayload
    const run = await runningRun(ctx.db, p.runId)
    if (!run) return
    const agent = (await loadAgents(ctx.db, run.projectId)).find((a) => a.row.id === p.agentId)
    if (!agent || agent.row.is_draft) return commitTask(ctx, task, p.runId, noUsage, async () => undefined)
    const documents = await loadDocuments(ctx.db, run.projectId)
    const configVersion = agent.row.config_version
    const existing = await currentAtomicValues(ctx.db, agent.row.id, configVersion)
    const combinations = expectedCombinations(
      agent,
      documents,
      existing.flatMap((a) => a.dimension_values),
    )
    const liveDocuments = new Map(documents.map((d) => [d.id, d]))
    // Web extractions are replaced by this task's searches (or dropped when it does not search).
    const extractions = await ctx.db
      .selectFrom("extractions")
      .selectAll()
      .where("agent_id", "=", agent.row.id)
      .where("agent_config_version", "=", configVersion)
      .where("source_type", "!=", "web")
      .orderBy("extracted_at")
      .orderBy("id")
      .execute()
    const spec = agentSpec(agent.row)
    const webSearch =
      agent.row.agent_type === "extraction" && agent.row.enable_web_search ? options.webSearch : undefined

    // Atomic values first (idempotent), so the model's work below can be keyed by them; with web search,
    // the searches to do are recorded unsearched (the agent's web-search progress counts them).
    const atomics = await ctx.db.transaction().execute(async (trx) => {
      const out: Array<{ id: string; instances: ReadonlyArray<InstanceRef>; query: string }> = []
      for (const instances of combinations)
        out.push({
          id: (await ensureAtomicValue(trx, run.projectId, agent.row.id, instances)).id,
          instances,
          query: webQuery(agent, instances),
        })
      await trx.deleteFrom("web_searches").where("agent_id", "=", agent.row.id).execute()
      if (webSearch !== undefined && out.length > 0)
        await trx
          .insertInto("web_searches")
          .values(
            out.map((a) => ({
              atomic_value_id: a.id,
              agent_id: agent.row.id,
              agent_config_version: configVersion,
              query: a.query,
              searched_at: null,
            })),
          )
          .execute()
      return out
    })

    let webUsage = noUsage
    const webFindings = new Map<string, ReadonlyArray<WebFinding>>()
    if (webSearch !== undefined)
      for (const atomic of atomics) {
        const r = await searchWeb(
          options,
          webSearch,
          { atomicValueId: atomic.id, query: atomic.query, referenceDate: run.referenceDate },
          spec,
          ctx.signal,
        )
        webUsage = addUsage(webUsage, r.usage)
        webFindings.set(atomic.id, r.findings)
        await ctx.db
          .updateTable("web_searches")
          .set({ searched_at: sql`now()`, result_count: r.hits })
          .where("atomic_value_id", "=", atomic.id)
          .where("agent_id", "=", agent.row.id)
          .execute()
      }

    const resolved = await runModel(
      options,
      Effect.gen(function* () {
        const model = yield* LanguageModel
        let usage = webUsage
        const rows: Array<ResolvedRow> = []
        for (const atomic of atomics) {
          const name = resultName(agent.row.name, atomic.instances)
          const mine: Array<Candidate> = [
            ...extractions
              .filter(
                (e) =>
                  e.atomic_value_id === atomic.id &&
                  (e.document_id === null || liveDocuments.has(e.document_id)),
              )
              .map(
                (e): Candidate => ({
                  candidate: {
                    id: e.id,
                    value: e.value,
                    sourceType: e.source_type,
                    documentName: e.document_id === null ? null : liveDocuments.get(e.document_id)!.name,
                    pageNumber: e.page_number,
                    relevantPassage: e.relevant_passage,
                  },
                  documentId: e.document_id,
                  web: undefined,
                }),
              ),
            ...(webFindings.get(atomic.id) ?? []).map(
              (w): Candidate => ({
                candidate: {
                  id: w.id,
                  value: w.value,
                  sourceType: "web",
                  documentName: null,
                  pageNumber: null,
                  relevantPassage: w.relevantPassage,
                },
                documentId: null,
                web: w,
              }),
            ),
          ]
          const candidates = mine.map((c) => c.candidate)
          let verdicts: ReadonlyArray<{ id: string; consistent: boolean; justification: string }> = []
          let summary: string | null = null
          if (candidates.length > 0) {
            const c = yield* model.checkConsistency({
              agent: spec,
              resultName: name,
              extractions: candidates,
            })
            usage = addUsage(usage, c.usage)
            verdicts = c.verdicts
            summary = c.summary
          }
          const consistentById = new Map(verdicts.map((v) => [v.id, v.consistent]))
          const r = yield* model.resolve({
            agent: spec,
            resultName: name,
            extractions: candidates.map((c) => ({ ...c, consistent: consistentById.get(c.id) ?? null })),
          })
          usage = addUsage(usage, r.usage)
          const used = new Set(r.usedExtractionIds)
          const cited = mine.filter((c) => used.has(c.candidate.id))
          const references: Record<string, readonly [string, number | null]> = {}
          const sources = new Map<
            string,
            { document_name: string; page_number: number; document_id: string; atomic_value_ids: string[] }
          >()
          for (const { candidate: e, documentId, web } of cited) {
            const documentName =
              web !== undefined
                ? web.source.title
                : documentId === null
                  ? "web"
                  : liveDocuments.get(documentId)!.name
            references[e.id] = [documentName, web === undefined ? e.pageNumber : null]
            if (web === undefined && documentId !== null && e.pageNumber !== null) {
              const key = `${documentId}:${e.pageNumber}`
              if (!sources.has(key))
                sources.set(key, {
                  document_name: documentName,
                  page_number: e.pageNumber,
                  document_id: documentId,
                  atomic_value_ids: [atomic.id],
                })
            }
          }
          const noResult = r.value === null || r.status === "No result"
          const origin = noResult ? { sourceType: "document", webSupplement: null } : provenance(cited)
          rows.push({
            atomicValueId: atomic.id,
            resultName: name,
            value: noResult ? notFoundText(agent) : storedValue(spec.valueType, r.value),
            status: noResult ? "No result" : r.status,
            justification: r.justification,
            references,
            sources: [...sources.values()],
            sourceType: origin.sourceType,
            webSupplement: origin.webSupplement,
            verdicts,
            summary:
              summary === null ? null : atomic.instances.length === 0 ? summary : `${name}: ${summary}`,
          })
        }
        return { rows, usage }
      }),
      ctx.signal,
    )

    await commitTask(ctx, task, p.runId, resolved.usage, async (trx) => {
      if (await agentStillAt(trx, agent.row.id, configVersion)) {
        await trx
          .deleteFrom("extractions")
          .where("agent_id", "=", agent.row.id)
          .where("agent_config_version", "=", configVersion)
          .where("source_type", "=", "web")
          .execute()
        const fresh = atomics.flatMap((atomic) =>
          (webFindings.get(atomic.id) ?? []).map((w) => ({
            id: w.id,
            project_id: run.projectId,
            agent_id: agent.row.id,
            agent_config_version: configVersion,
            atomic_value_id: atomic.id,
            document_id: null,
            value: w.value,
            relevant_passage: w.relevantPassage,
            reasoning: w.reasoning,
            page_number: null,
            source_type: "web" as const,
            web_search_query: w.query,
            web_search_timestamp: w.searchedAt,
            web_citations: JSON.stringify([
              { snippets: [{ text: w.relevantPassage }], source: w.source },
            ] satisfies ReadonlyArray<WebCitation>),
          })),
        )
        if (fresh.length > 0) await trx.insertInto("extractions").values(fresh).execute()
        await writeResults(trx, run.projectId, agent, resolved.rows)
      }
    })
  }

// ---------------------------------------------------------------------------------------------------------
// derive

export const deriveHandler =
  (options: StageOptions) =>
  async (task: TaskRow, ctx: StageContext): Promise<void> => {
    const p = task.payload as unknown as AgentPayload
    const run = await runningRun(ctx.db, p.runId)
    if (!run) return
    const agents = await loadAgents(ctx.db, run.projectId)
    const agent = agents.find((a) => a.row.id === p.agentId)
    if (!agent || agent.row.is_draft) return commitTask(ctx, task, p.runId, noUsage, async () => undefined)
    const documents = await loadDocuments(ctx.db, run.projectId)
    const configVersion = agent.row.config_version
    const inputs =
      agent.references.length === 0
        ? []
        : await ctx.db
            .selectFrom("resolution_results as r")
            .innerJoin("agents as a", (j) =>
              j.onRef("a.id", "=", "r.agent_id").onRef("a.config_version", "=", "r.agent_config_version"),
            )
            .innerJoin("atomic_values as av", "av.id", "r.atomic_value_id")
            .select(["r.id", "r.agent_id", "a.name", "r.value", "r.resolution_status", "av.dimension_values"])
            .where("r.agent_id", "in", agent.references)
            .orderBy("a.created_at")
            .orderBy("r.result_name")
            .execute()
    const combinations = expectedCombinations(
      agent,
      documents,
      inputs.flatMap((i) => i.dimension_values),
    )
    const spec = agentSpec(agent.row)
    const atomics = await ctx.db.transaction().execute(async (trx) => {
      const out: Array<{ id: string; instances: ReadonlyArray<InstanceRef> }> = []
      for (const instances of combinations)
        out.push({ id: (await ensureAtomicValue(trx, run.projectId, agent.row.id, instances)).id, instances })
      return out
    })
    const derived = await runModel(
      options,
      Effect.gen(function* () {
        const model = yield* LanguageModel
        let usage = noUsage
        const out: Array<{
          atomic: (typeof atomics)[number]
          name: string
          value: string | null
          reasoning: string
          used: typeof inputs
        }> = []
        for (const atomic of atomics) {
          // An input applies when it agrees on every dimension the two share.
          const applicable = inputs.filter((input) =>
            input.dimension_values.every((dv) =>
              atomic.instances.every(
                (i) => i.dimension.dimensionId !== dv.dimension_id || i.value === dv.dimension_value,
              ),
            ),
          )
          const request: Array<DerivedInput> = applicable.map((input) => ({
            agentId: input.agent_id,
            agentName: input.name,
            resultId: input.id,
            dimensionValues: Object.fromEntries(
              input.dimension_values.map((dv) => [dv.name, dv.dimension_value]),
            ),
            value:
              input.resolution_status === "No result" || input.value === null ? null : String(input.value),
          }))
          const name = resultName(agent.row.name, atomic.instances)
          const r = yield* model.derive({ agent: spec, resultName: name, inputs: request })
          usage = addUsage(usage, r.usage)
          out.push({ atomic, name, value: r.value, reasoning: r.reasoning, used: applicable })
        }
        return { out, usage }
      }),
      ctx.signal,
    )

    await commitTask(ctx, task, p.runId, derived.usage, async (trx) => {
      if (await agentStillAt(trx, agent.row.id, configVersion)) {
        await trx
          .deleteFrom("extractions")
          .where("agent_id", "=", agent.row.id)
          .where("source_type", "=", "derived")
          .execute()
        const rows: Array<ResolvedRow> = []
        for (const d of derived.out) {
          const references: Record<string, readonly [string, number | null]> = {}
          if (d.value !== null) {
            await trx
              .insertInto("extractions")
              .values({
                project_id: run.projectId,
                agent_id: agent.row.id,
                agent_config_version: configVersion,
                atomic_value_id: d.atomic.id,
                document_id: null,
                value: d.value,
                relevant_passage: "",
                reasoning: d.reasoning,
                page_number: null,
                consistent: true,
                justification_for_consistency: "Derived from resolved values.",
                source_type: "derived",
                derived_sources: JSON.stringify(
                  d.used.map((input) => ({
                    source_agent_id: input.agent_id,
                    source_agent_name: input.name,
                    source_resolution_result_id: input.id,
                    dimension_values: Object.fromEntries(
                      input.dimension_values.map((dv) => [dv.name, dv.dimension_value]),
                    ),
                    resolved_value: input.value === null ? "" : String(input.value),
                  })),
                ),
              })
              .execute()
          }
          rows.push({
            atomicValueId: d.atomic.id,
            resultName: d.name,
            value: d.value === null ? notFoundText(agent) : storedValue(spec.valueType, d.value),
            status: d.value === null ? "No result" : "Resolved",
            justification: d.reasoning,
            references,
            sources: [],
            sourceType: "derived",
            webSupplement: null,
            verdicts: [],
            summary: null,
          })
        }
        await writeResults(trx, run.projectId, agent, rows)
      }
    })
  }
