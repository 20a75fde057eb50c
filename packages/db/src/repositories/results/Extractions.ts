/**
 * Extractions, extraction pairs and web searches (part of the results aggregate, see `../Results.ts`):
 * what the stages found, per source, before resolution.
 */
import { Effect } from "effect"
import { type RawBuilder, sql } from "kysely"
import type { Conn } from "../../Db.ts"
import type { ExtractionRow, WebCitation } from "../../Schema.ts"
import { type CompletionWrites, whenCompleted } from "../../TaskQueue.ts"

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

// ---------------------------------------------------------------------------------------------------------
// Extractions

export interface DocumentExtraction {
  readonly atomicValueId: string
  readonly value: string
  readonly relevantPassage: string
  readonly reasoning: string
  readonly pageNumber: number
  /** Whether the passage is on its cited page and states the value (`domain/Grounding`); default true. */
  readonly grounded?: boolean | undefined
  /** 0 to 1 (`domain/Confidence`); default null (not computed). */
  readonly confidence?: number | null | undefined
}

/**
 * Replaces an agent/document pair's document extractions with `extractions` and records the pair as
 * extracted at these versions (with the dimensions it was extracted for and how many values it gave).
 */
export const replaceDocumentExtractions = (
  conn: Conn,
  input: {
    readonly projectId: string
    readonly agentId: string
    readonly agentConfigVersion: number
    readonly documentId: string
    readonly documentVersion: number
    readonly dimensionsKey: string
    readonly extractions: ReadonlyArray<DocumentExtraction>
  },
): Effect.Effect<void> =>
  replaceDocumentExtractionsOfAgents(conn, {
    projectId: input.projectId,
    documentId: input.documentId,
    documentVersion: input.documentVersion,
    agents: [input],
  }).pipe(Effect.asVoid)

/** One document version's extractions of several agents (see `replaceDocumentExtractionsOfAgents`). */
export interface DocumentExtractionsOfAgents {
  readonly projectId: string
  readonly documentId: string
  readonly documentVersion: number
  readonly agents: ReadonlyArray<{
    readonly agentId: string
    readonly agentConfigVersion: number
    readonly dimensionsKey: string
    readonly extractions: ReadonlyArray<DocumentExtraction>
  }>
}

/**
 * The writes of `replaceDocumentExtractionsOfAgents` as common table expressions (`ex_current` names the
 * agents that write), made only when `guard` holds.
 */
const documentExtractionWrites = (input: DocumentExtractionsOfAgents, guard: RawBuilder<boolean>) => {
  const rows = input.agents.flatMap((agent) => agent.extractions.map((e) => ({ agent, e })))
  // Each agent's record in one order for every writer, so two tasks never wait on each other in turn.
  const agents = [...input.agents].sort((x, y) =>
    x.agentId < y.agentId ? -1 : x.agentId > y.agentId ? 1 : 0,
  )
  const column = <A>(f: (r: (typeof rows)[number]) => A) => sql.val(rows.map(f))
  return sql`
      ex_asked as (
        select * from unnest(${sql.val(agents.map((a) => a.agentId))}::uuid[],
                             ${sql.val(agents.map((a) => a.agentConfigVersion))}::int[])
          as w(agent_id, agent_config_version)
        where ${guard}
      ), ex_held as (
        select a.id, a.config_version from agents a where a.id in (select agent_id from ex_asked)
        order by a.id for share
      ), ex_current as (
        select w.agent_id from ex_asked w
          join ex_held h on h.id = w.agent_id and h.config_version = w.agent_config_version
      ), ex_gone as (
        delete from extractions
        where agent_id in (select agent_id from ex_current)
          and document_id = ${input.documentId}::uuid and source_type = 'document'
      ), ex_made as (
        insert into extractions (project_id, agent_id, agent_config_version, atomic_value_id, document_id, value,
                                 relevant_passage, reasoning, page_number, grounded, confidence, source_type)
        select ${input.projectId}::uuid, x.agent_id, x.agent_config_version, x.atomic_value_id, ${input.documentId}::uuid,
               x.value, x.relevant_passage, x.reasoning, x.page_number, x.grounded, x.confidence, 'document'
        from unnest(${column((r) => r.agent.agentId)}::uuid[], ${column((r) => r.agent.agentConfigVersion)}::int[],
                    ${column((r) => r.e.atomicValueId)}::uuid[], ${column((r) => r.e.value)}::text[],
                    ${column((r) => r.e.relevantPassage)}::text[], ${column((r) => r.e.reasoning)}::text[],
                    ${column((r) => r.e.pageNumber)}::int[], ${column((r) => r.e.grounded ?? true)}::boolean[],
                    ${column((r) => r.e.confidence ?? null)}::real[])
          as x(agent_id, agent_config_version, atomic_value_id, value, relevant_passage, reasoning, page_number,
               grounded, confidence)
        where x.agent_id in (select agent_id from ex_current)
      ), ex_paired as (
        insert into extraction_pairs as p (agent_id, document_id, agent_config_version, document_version,
                                           dimensions_key, value_count)
        select x.agent_id, ${input.documentId}::uuid, x.agent_config_version, ${input.documentVersion}::int,
               x.dimensions_key, x.value_count
        from unnest(${sql.val(agents.map((a) => a.agentId))}::uuid[], ${sql.val(agents.map((a) => a.agentConfigVersion))}::int[],
                    ${sql.val(agents.map((a) => a.dimensionsKey))}::text[], ${sql.val(agents.map((a) => a.extractions.length))}::int[])
          with ordinality as x(agent_id, agent_config_version, dimensions_key, value_count, position)
        where x.agent_id in (select agent_id from ex_current)
        order by x.position
        on conflict (agent_id, document_id) do update set
          agent_config_version = excluded.agent_config_version, document_version = excluded.document_version,
          dimensions_key = excluded.dimensions_key, value_count = excluded.value_count, extracted_at = now()
      )`
}

/**
 * One document version's extractions of several agents, each replacing what the agent had from the
 * document, with each agent's extraction record: one statement whatever the number of agents and values.
 * Only the agents still at the config version given write (their rows locked for share until the
 * transaction ends, so an edit of the agent waits for the write or the write sees the edit): an agent
 * edited since the work was planned keeps what it has. Answers the agents that wrote.
 */
export const replaceDocumentExtractionsOfAgents = (
  conn: Conn,
  input: DocumentExtractionsOfAgents,
): Effect.Effect<ReadonlySet<string>> =>
  input.agents.length === 0
    ? Effect.succeed(new Set())
    : run(() =>
        sql<{ agent_id: string }>`
          with ${documentExtractionWrites(input, sql<boolean>`true`)}
          select agent_id from ex_current`.execute(conn),
      ).pipe(Effect.map((r) => new Set(r.rows.map((row) => row.agent_id))))

/**
 * The same writes as `replaceDocumentExtractionsOfAgents`, made in the statement that completes the task
 * whose work they are (`TaskQueue.complete`): nothing is written when its worker no longer holds it.
 */
export const documentExtractionsOnCompletion = (input: DocumentExtractionsOfAgents): CompletionWrites =>
  documentExtractionWrites(input, whenCompleted)

/** The agent's document (and derived) extractions at this config version, oldest first. */
export const nonWebExtractions = (
  conn: Conn,
  agentId: string,
  configVersion: number,
): Effect.Effect<ReadonlyArray<ExtractionRow>> =>
  run(() =>
    conn
      .selectFrom("extractions")
      .selectAll()
      .where("agent_id", "=", agentId)
      .where("agent_config_version", "=", configVersion)
      .where("source_type", "!=", "web")
      .orderBy("extracted_at")
      .orderBy("id")
      .execute(),
  )

/** Where an extraction was found: its document page, if any, and the passage it quotes. */
export type ExtractionPassage = Pick<
  ExtractionRow,
  "id" | "document_id" | "page_number" | "relevant_passage" | "value"
>

/** The extractions among `ids` of the project, or of any project of the organisation. */
export const extractionPassages = (
  conn: Conn,
  ids: ReadonlyArray<string>,
  owner: { readonly projectId: string } | { readonly organizationId: string },
): Effect.Effect<ReadonlyArray<ExtractionPassage>> => {
  if (ids.length === 0) return Effect.succeed([])
  const q = conn
    .selectFrom("extractions")
    .select(["id", "document_id", "page_number", "relevant_passage", "value"])
    .where("id", "in", [...ids])
  return run(() =>
    ("projectId" in owner
      ? q.where("project_id", "=", owner.projectId)
      : q.where("project_id", "in", (sub) =>
          sub.selectFrom("projects").select("id").where("organization_id", "=", owner.organizationId),
        )
    ).execute(),
  )
}

export interface WebExtraction {
  readonly id: string
  readonly atomicValueId: string
  readonly value: string
  readonly relevantPassage: string
  readonly reasoning: string
  readonly query: string
  readonly searchedAt: Date
  readonly source: { readonly url: string; readonly title: string }
}

/** Replaces the agent's web extractions at this config version with `extractions`. */
export const replaceWebExtractions = (
  conn: Conn,
  input: {
    readonly projectId: string
    readonly agentId: string
    readonly configVersion: number
    readonly extractions: ReadonlyArray<WebExtraction>
  },
): Effect.Effect<void> =>
  Effect.gen(function* () {
    yield* run(() =>
      conn
        .deleteFrom("extractions")
        .where("agent_id", "=", input.agentId)
        .where("agent_config_version", "=", input.configVersion)
        .where("source_type", "=", "web")
        .execute(),
    )
    const fresh = input.extractions.map((w) => ({
      id: w.id,
      project_id: input.projectId,
      agent_id: input.agentId,
      agent_config_version: input.configVersion,
      atomic_value_id: w.atomicValueId,
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
    }))
    if (fresh.length > 0) yield* run(() => conn.insertInto("extractions").values(fresh).execute())
  })

export interface DerivedExtraction {
  readonly atomicValueId: string
  readonly value: string
  readonly reasoning: string
  readonly sources: ReadonlyArray<{
    readonly agentId: string
    readonly agentName: string
    readonly resultId: string
    readonly dimensionValues: Readonly<Record<string, string>>
    readonly resolvedValue: string
  }>
}

/** Replaces the agent's derived extractions with `extractions` (consistent by construction). */
export const replaceDerivedExtractions = (
  conn: Conn,
  input: {
    readonly projectId: string
    readonly agentId: string
    readonly configVersion: number
    readonly extractions: ReadonlyArray<DerivedExtraction>
  },
): Effect.Effect<void> =>
  Effect.gen(function* () {
    yield* run(() =>
      conn
        .deleteFrom("extractions")
        .where("agent_id", "=", input.agentId)
        .where("source_type", "=", "derived")
        .execute(),
    )
    if (input.extractions.length > 0)
      yield* run(() =>
        conn
          .insertInto("extractions")
          .values(
            input.extractions.map((d) => ({
              project_id: input.projectId,
              agent_id: input.agentId,
              agent_config_version: input.configVersion,
              atomic_value_id: d.atomicValueId,
              document_id: null,
              value: d.value,
              relevant_passage: "",
              reasoning: d.reasoning,
              page_number: null,
              consistent: true,
              justification_for_consistency: "Derived from resolved values.",
              source_type: "derived",
              derived_sources: JSON.stringify(
                d.sources.map((s) => ({
                  source_agent_id: s.agentId,
                  source_agent_name: s.agentName,
                  source_resolution_result_id: s.resultId,
                  dimension_values: s.dimensionValues,
                  resolved_value: s.resolvedValue,
                })),
              ),
            })),
          )
          .execute(),
      )
  })

// ---------------------------------------------------------------------------------------------------------
// Web searches

/**
 * Replaces the agent's web searches with these, recorded unsearched (the agent's web-search progress
 * counts them); none leaves the agent without searches.
 */
export const planWebSearches = (
  conn: Conn,
  input: {
    readonly agentId: string
    readonly configVersion: number
    readonly searches: ReadonlyArray<{ readonly atomicValueId: string; readonly query: string }>
  },
): Effect.Effect<void> =>
  Effect.gen(function* () {
    yield* run(() => conn.deleteFrom("web_searches").where("agent_id", "=", input.agentId).execute())
    if (input.searches.length > 0)
      yield* run(() =>
        conn
          .insertInto("web_searches")
          .values(
            input.searches.map((s) => ({
              atomic_value_id: s.atomicValueId,
              agent_id: input.agentId,
              agent_config_version: input.configVersion,
              query: s.query,
              searched_at: null,
            })),
          )
          .execute(),
      )
  })

export const markWebSearched = (
  conn: Conn,
  input: { readonly agentId: string; readonly atomicValueId: string; readonly resultCount: number },
): Effect.Effect<void> =>
  run(() =>
    conn
      .updateTable("web_searches")
      .set({ searched_at: sql`now()`, result_count: input.resultCount })
      .where("atomic_value_id", "=", input.atomicValueId)
      .where("agent_id", "=", input.agentId)
      .execute(),
  )
