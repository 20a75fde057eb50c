/**
 * Results, atomic values and extractions: what the pipeline's stages write (dimension instances, atomic
 * values, extractions and extraction pairs, web searches, resolution results, agent resolutions) and the
 * reads they need. Driver errors are defects.
 */
import { dimensionKey } from "@dxs/domain/Combinations"
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../Db.ts"
import type { ExtractionRow, StoredDimensionValue, WebCitation } from "../Schema.ts"

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

// ---------------------------------------------------------------------------------------------------------
// Dimension instances and atomic values

/** One dimension value of a result: the document's own for a Document dimension, else shared (null). */
export interface InstanceInput {
  readonly dimensionId: string
  /** The dimension's name, stored with the atomic value. */
  readonly name: string
  readonly value: string
  readonly documentId: string | null
}

export interface AtomicValue {
  readonly id: string
  readonly dimensionValues: ReadonlyArray<StoredDimensionValue>
}

const ensureInstance = (conn: Conn, instance: InstanceInput) =>
  run(() =>
    conn
      .insertInto("dimension_instances")
      .values({ dimension_id: instance.dimensionId, value: instance.value, document_id: instance.documentId })
      .onConflict((oc) => oc.columns(["dimension_id", "value", "document_id"]).doNothing())
      .returning("id")
      .executeTakeFirst()
      .then(
        (inserted) =>
          inserted ??
          conn
            .selectFrom("dimension_instances")
            .select("id")
            .where("dimension_id", "=", instance.dimensionId)
            .where("value", "=", instance.value)
            .where((eb) =>
              instance.documentId === null
                ? eb("document_id", "is", null)
                : eb("document_id", "=", instance.documentId),
            )
            .executeTakeFirstOrThrow(),
      ),
  )

/**
 * The atomic value of an agent for one combination of dimension instances (keyed by the instance ids),
 * created when missing: `insert … on conflict do nothing`, then a read, so callers may run
 * it outside their final transaction and hold no lock on a row that all tasks of the agent share.
 */
export const ensureAtomicValue = (
  conn: Conn,
  input: {
    readonly projectId: string
    readonly agentId: string
    readonly instances: ReadonlyArray<InstanceInput>
  },
): Effect.Effect<AtomicValue> =>
  Effect.gen(function* () {
    const stored: Array<StoredDimensionValue> = []
    for (const instance of input.instances) {
      const row = yield* ensureInstance(conn, instance)
      stored.push({
        id: row.id,
        dimension_id: instance.dimensionId,
        name: instance.name,
        dimension_value: instance.value,
        document_id: instance.documentId,
      })
    }
    const key = dimensionKey(stored.map((s) => s.id))
    const atomic = yield* run(() =>
      conn
        .insertInto("atomic_values")
        .values({
          project_id: input.projectId,
          agent_id: input.agentId,
          dimension_key: key,
          dimension_values: JSON.stringify(stored),
        })
        .onConflict((oc) => oc.columns(["agent_id", "dimension_key"]).doNothing())
        .returning("id")
        .executeTakeFirst()
        .then(
          (inserted) =>
            inserted ??
            conn
              .selectFrom("atomic_values")
              .select("id")
              .where("agent_id", "=", input.agentId)
              .where("dimension_key", "=", key)
              .executeTakeFirstOrThrow(),
        ),
    )
    return { id: atomic.id, dimensionValues: stored }
  })

/** The agent's atomic values that have an extraction at this config version. */
export const currentAtomicValues = (
  conn: Conn,
  agentId: string,
  configVersion: number,
): Effect.Effect<ReadonlyArray<{ id: string; dimension_values: ReadonlyArray<StoredDimensionValue> }>> =>
  run(() =>
    conn
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
      .execute(),
  )

/** True when the agent is still at this config version; its row is share-locked until the transaction ends. */
export const agentStillAt = (conn: Conn, agentId: string, configVersion: number): Effect.Effect<boolean> =>
  run(() =>
    conn
      .selectFrom("agents")
      .select("config_version")
      .where("id", "=", agentId)
      .forShare()
      .executeTakeFirst(),
  ).pipe(Effect.map((row) => row?.config_version === configVersion))

// ---------------------------------------------------------------------------------------------------------
// Extractions

export interface DocumentExtraction {
  readonly atomicValueId: string
  readonly value: string
  readonly relevantPassage: string
  readonly reasoning: string
  readonly pageNumber: number
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
  Effect.gen(function* () {
    yield* run(() =>
      conn
        .deleteFrom("extractions")
        .where("agent_id", "=", input.agentId)
        .where("document_id", "=", input.documentId)
        .where("source_type", "=", "document")
        .execute(),
    )
    for (const e of input.extractions)
      yield* run(() =>
        conn
          .insertInto("extractions")
          .values({
            project_id: input.projectId,
            agent_id: input.agentId,
            agent_config_version: input.agentConfigVersion,
            atomic_value_id: e.atomicValueId,
            document_id: input.documentId,
            value: e.value,
            relevant_passage: e.relevantPassage,
            reasoning: e.reasoning,
            page_number: e.pageNumber,
            source_type: "document",
          })
          .execute(),
      )
    const pair = {
      agent_config_version: input.agentConfigVersion,
      document_version: input.documentVersion,
      dimensions_key: input.dimensionsKey,
      value_count: input.extractions.length,
    }
    yield* run(() =>
      conn
        .insertInto("extraction_pairs")
        .values({ agent_id: input.agentId, document_id: input.documentId, ...pair })
        .onConflict((oc) =>
          oc.columns(["agent_id", "document_id"]).doUpdateSet({ ...pair, extracted_at: sql`now()` }),
        )
        .execute(),
    )
  })

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
    for (const d of input.extractions)
      yield* run(() =>
        conn
          .insertInto("extractions")
          .values({
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
          })
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

// ---------------------------------------------------------------------------------------------------------
// Resolution results

/** A resolved value of the agents `agentIds`, with the atomic value's dimension values, as derivation reads it. */
export interface ResolvedInput {
  readonly id: string
  readonly agent_id: string
  readonly name: string
  readonly value: unknown
  readonly resolution_status: string
  readonly dimension_values: ReadonlyArray<StoredDimensionValue>
}

/** The current results (at their agent's config version) of these agents, by agent age then result name. */
export const resolvedInputs = (
  conn: Conn,
  agentIds: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<ResolvedInput>> =>
  agentIds.length === 0
    ? Effect.succeed([])
    : run(() =>
        conn
          .selectFrom("resolution_results as r")
          .innerJoin("agents as a", (j) =>
            j.onRef("a.id", "=", "r.agent_id").onRef("a.config_version", "=", "r.agent_config_version"),
          )
          .innerJoin("atomic_values as av", "av.id", "r.atomic_value_id")
          .select(["r.id", "r.agent_id", "a.name", "r.value", "r.resolution_status", "av.dimension_values"])
          .where("r.agent_id", "in", agentIds)
          .orderBy("a.created_at")
          .orderBy("r.result_name")
          .execute(),
      )

export interface WebSupplement {
  readonly text: string
  readonly sources: ReadonlyArray<{ url: string; title: string }>
}

export interface ResolvedRow {
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
  /** Consistency verdicts on the extractions the value was resolved from. */
  readonly verdicts: ReadonlyArray<{ id: string; consistent: boolean; justification: string }>
  readonly summary: string | null
}

/**
 * Writes an agent's results at its config version: the consistency verdicts on its extractions, one
 * result per row (a value set by hand at this config version is kept), no result for combinations that
 * no longer exist, the agent's inconsistency summary and attention flag, and its resolution as complete.
 */
export const writeResults = (
  conn: Conn,
  input: {
    readonly projectId: string
    readonly agentId: string
    readonly configVersion: number
    readonly rows: ReadonlyArray<ResolvedRow>
  },
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const { agentId, configVersion, rows } = input
    for (const row of rows) {
      for (const v of row.verdicts)
        yield* run(() =>
          conn
            .updateTable("extractions")
            .set({ consistent: v.consistent, justification_for_consistency: v.justification })
            .where("id", "=", v.id)
            .execute(),
        )
      yield* run(() => upsertResult(conn, input.projectId, agentId, configVersion, row))
    }
    // Results of combinations that no longer exist (a removed static value, a deleted document) go.
    const keep = rows.map((r) => r.atomicValueId)
    let stale = conn.deleteFrom("resolution_results").where("agent_id", "=", agentId)
    if (keep.length > 0) stale = stale.where("atomic_value_id", "not in", keep)
    yield* run(() => stale.execute())
    const summaries = rows.map((r) => r.summary).filter((s): s is string => s !== null)
    yield* run(() =>
      conn
        .updateTable("agents")
        .set({
          inconsistency_summary: summaries.length === 0 ? null : summaries.join("\n"),
          requires_attention: rows.some((r) => r.status === "Requires attention"),
        })
        .where("id", "=", agentId)
        .execute(),
    )
    yield* run(() =>
      conn
        .insertInto("agent_resolutions")
        .values({ agent_id: agentId, agent_config_version: configVersion, complete: true })
        .onConflict((oc) =>
          oc
            .column("agent_id")
            .doUpdateSet({ agent_config_version: configVersion, complete: true, resolved_at: sql`now()` }),
        )
        .execute(),
    )
  })

const upsertResult = (
  conn: Conn,
  projectId: string,
  agentId: string,
  configVersion: number,
  row: ResolvedRow,
) =>
  conn
    .insertInto("resolution_results")
    .values({
      project_id: projectId,
      agent_id: agentId,
      agent_config_version: configVersion,
      atomic_value_id: row.atomicValueId,
      result_name: row.resultName,
      value: JSON.stringify(row.value),
      resolution_status: row.status,
      justification: row.justification,
      references: JSON.stringify(row.references),
      sources: JSON.stringify(row.sources),
      source_type: row.sourceType,
      is_web_supplement: row.webSupplement !== null,
      web_supplement: row.webSupplement === null ? null : JSON.stringify(row.webSupplement),
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
