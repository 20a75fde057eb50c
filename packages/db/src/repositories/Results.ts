/**
 * Results, atomic values and extractions: what the pipeline's stages write (dimension instances, atomic
 * values, extractions and extraction pairs, web searches, resolution results, agent resolutions) and the
 * reads they need, then what the API reads of them and the overrides and reviews people make. This module
 * holds the resolution results; the rest of the aggregate is in `results/`.
 * Driver errors are defects.
 */
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../Db.ts"
import type { StoredDimensionValue } from "../Schema.ts"

export * from "./results/AtomicValues.ts"
export * from "./results/CurrentResults.ts"
export * from "./results/Extractions.ts"
export * from "./results/Grid.ts"
export * from "./results/ReviewQueue.ts"

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

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
  /** 0 to 1 (`domain/Confidence`); null when there is no value. Omitted: null. */
  readonly confidence?: number | null | undefined
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
    /** The run resolving them: the values it changes are recorded as its changes. */
    readonly runId?: string | undefined
  },
): Effect.Effect<void> =>
  Effect.gen(function* () {
    const { agentId, configVersion, rows } = input
    // In a few set-based statements whatever the number of rows (in one order, so two writers never wait
    // on each other in turn).
    const verdicts = rows.flatMap((r) => r.verdicts)
    if (verdicts.length > 0)
      yield* run(() =>
        sql`update extractions e set consistent = v.consistent, justification_for_consistency = v.justification
          from unnest(${sql.val(verdicts.map((v) => v.id))}::uuid[], ${sql.val(verdicts.map((v) => v.consistent))}::boolean[],
                      ${sql.val(verdicts.map((v) => v.justification))}::text[]) as v(id, consistent, justification)
          where e.id = v.id`.execute(conn),
      )
    const ordered = [...rows].sort((x, y) =>
      x.atomicValueId < y.atomicValueId ? -1 : x.atomicValueId > y.atomicValueId ? 1 : 0,
    )
    if (ordered.length > 0 && input.runId !== undefined)
      yield* run(() => recordChanges(conn, input.runId!, agentId, configVersion, ordered))
    if (ordered.length > 0)
      yield* run(() => upsertResults(conn, input.projectId, agentId, configVersion, ordered))
    // Results of combinations that no longer exist (a removed static value, a deleted document) go.
    const keep = rows.map((r) => r.atomicValueId)
    yield* run(() =>
      sql`delete from resolution_results where agent_id = ${agentId}::uuid
        and not (atomic_value_id = any(${sql.val(keep)}::uuid[]))`.execute(conn),
    )
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

/** A value set by hand; `value` is the JSON value to store, null for none. */
export interface ResultOverride {
  readonly value: unknown
  readonly resolutionStatus: string
  readonly justification: string | null
  readonly updatedByEmail: string | null
}

/** Sets the result's value by hand: `writeResults` keeps it while the agent stays at this config version. */
export const overrideResult = (conn: Conn, resultId: string, override: ResultOverride): Effect.Effect<void> =>
  run(() =>
    conn
      .updateTable("resolution_results")
      .set({
        value: override.value === null ? null : JSON.stringify(override.value),
        resolution_status: override.resolutionStatus,
        justification: override.justification,
        is_overridden: true,
        // A person's value is certain; without one there is nothing to be confident about.
        confidence: override.value === null ? null : 1,
        updated_by_email: override.updatedByEmail,
        updated_at: sql`now()`,
      })
      .where("id", "=", resultId)
      .execute(),
  ).pipe(Effect.asVoid)

export interface ResultReview {
  readonly status: string
  readonly comment: string
  readonly reviewedBy: string | null
}

/** Records a review of the result as its latest, timed now. */
export const recordReview = (conn: Conn, resultId: string, review: ResultReview): Effect.Effect<void> =>
  run(() =>
    conn
      .updateTable("resolution_results")
      .set({
        latest_review_status: review.status,
        latest_review_comment: review.comment,
        latest_review_at: sql`now()`,
        latest_review_by: review.reviewedBy,
      })
      .where("id", "=", resultId)
      .execute(),
  ).pipe(Effect.asVoid)

/** The rows' fields as arrays for `unnest`: as they are, or as JSON text. */
const columnsOf = (rows: ReadonlyArray<ResolvedRow>) => {
  const column = <A>(f: (r: ResolvedRow) => A) => sql.val(rows.map(f))
  return { column, json: (f: (r: ResolvedRow) => unknown) => column((r) => JSON.stringify(f(r))) }
}

/**
 * The values of the rows that differ from the agent's results before them (a value set by hand at this
 * version, which the write keeps, aside), recorded as the run's changes with both values' citations. Asked
 * again in the same run (a retried task), a combination keeps the value from before the run; one that ends
 * where it started is no change.
 */
const recordChanges = async (
  conn: Conn,
  runId: string,
  agentId: string,
  configVersion: number,
  rows: ReadonlyArray<ResolvedRow>,
) => {
  const { column, json } = columnsOf(rows)
  await sql`
    insert into run_value_changes as c (run_id, agent_id, atomic_value_id, result_name, previous_value,
      previous_status, previous_sources, previous_references, value, status, sources, "references")
    select ${runId}::uuid, rr.agent_id, rr.atomic_value_id, x.result_name, rr.value, rr.resolution_status,
           coalesce(rr.sources, '[]'::jsonb), coalesce(rr."references", '{}'::jsonb), x.value, x.status, x.sources, x.refs
    from unnest(${column((r) => r.atomicValueId)}::uuid[], ${column((r) => r.resultName)}::text[],
                ${json((r) => r.value)}::jsonb[], ${column((r) => r.status)}::text[],
                ${json((r) => r.sources)}::jsonb[], ${json((r) => r.references)}::jsonb[])
      as x(atomic_value_id, result_name, value, status, sources, refs)
    join resolution_results rr on rr.atomic_value_id = x.atomic_value_id and rr.agent_id = ${agentId}::uuid
    where nullif(rr.value, 'null'::jsonb) is distinct from nullif(x.value, 'null'::jsonb)
      and not (rr.is_overridden and rr.agent_config_version = ${configVersion}::int)
    order by rr.atomic_value_id
    on conflict (run_id, atomic_value_id) do update set result_name = excluded.result_name, value = excluded.value,
      status = excluded.status, sources = excluded.sources, "references" = excluded."references"`.execute(
    conn,
  )
  await sql`delete from run_value_changes where run_id = ${runId}::uuid and agent_id = ${agentId}::uuid
    and nullif(previous_value, 'null'::jsonb) is not distinct from nullif(value, 'null'::jsonb)`.execute(conn)
}

/**
 * A model's value settled by its review: marked correct it no longer requires attention (`Resolved`),
 * marked wrong it does (`Requires attention`); the justification says who decided. A value set by hand
 * keeps its own status.
 */
export const settleByReview = (
  conn: Conn,
  resultId: string,
  settled: { readonly status: string; readonly justification: string },
): Effect.Effect<void> =>
  run(() =>
    conn
      .updateTable("resolution_results")
      .set({
        resolution_status: settled.status,
        justification: settled.justification,
        updated_at: sql`now()`,
      })
      .where("id", "=", resultId)
      .where("is_overridden", "=", false)
      .execute(),
  ).pipe(Effect.asVoid)

/**
 * The agent's results at this config version, one row each; a value set by hand at this version is kept,
 * and a value marked correct that is resolved again unchanged stays `Resolved`.
 */
const upsertResults = (
  conn: Conn,
  projectId: string,
  agentId: string,
  configVersion: number,
  rows: ReadonlyArray<ResolvedRow>,
) => {
  const { column, json } = columnsOf(rows)
  // Kept by hand: overridden at this config version.
  const byHand = sql`resolution_results.is_overridden and resolution_results.agent_config_version = ${configVersion}::int`
  return sql`
    insert into resolution_results (project_id, agent_id, agent_config_version, atomic_value_id, result_name, value,
      resolution_status, justification, "references", sources, source_type, is_web_supplement, web_supplement, confidence)
    select ${projectId}::uuid, ${agentId}::uuid, ${configVersion}::int, x.atomic_value_id, x.result_name, x.value,
           x.resolution_status, x.justification, x.refs, x.sources, x.source_type, x.web_supplement is not null,
           x.web_supplement, x.confidence
    from unnest(${column((r) => r.atomicValueId)}::uuid[], ${column((r) => r.resultName)}::text[],
                ${json((r) => r.value)}::jsonb[], ${column((r) => r.status)}::text[],
                ${column((r) => r.justification)}::text[], ${json((r) => r.references)}::jsonb[],
                ${json((r) => r.sources)}::jsonb[], ${column((r) => r.sourceType)}::text[],
                ${column((r) => (r.webSupplement === null ? null : JSON.stringify(r.webSupplement)))}::jsonb[],
                ${column((r) => r.confidence ?? null)}::real[])
      with ordinality as x(atomic_value_id, result_name, value, resolution_status, justification, refs, sources,
                           source_type, web_supplement, confidence, position)
    order by x.position
    on conflict (atomic_value_id) do update set
      result_name = excluded.result_name,
      "references" = excluded."references",
      sources = excluded.sources,
      source_type = excluded.source_type,
      is_web_supplement = excluded.is_web_supplement,
      web_supplement = excluded.web_supplement,
      value = case when ${byHand} then resolution_results.value else excluded.value end,
      resolution_status = case when ${byHand} then resolution_results.resolution_status
                               when resolution_results.latest_review_status = 'positive'
                                    and resolution_results.value is not distinct from excluded.value
                                    and excluded.resolution_status = 'Requires attention' then 'Resolved'
                               else excluded.resolution_status end,
      justification = case when ${byHand} then resolution_results.justification else excluded.justification end,
      confidence = case when ${byHand} then resolution_results.confidence else excluded.confidence end,
      is_overridden = ${byHand},
      updated_by_email = case when resolution_results.agent_config_version = ${configVersion}::int
                              then resolution_results.updated_by_email else null end,
      agent_config_version = excluded.agent_config_version,
      updated_at = now()`.execute(conn)
}

/**
 * Forgets every resolution of the project's agents: after documents leave the project, the next launch
 * resolves each agent again without their values.
 */
export const clearResolutionsOfProject = (conn: Conn, projectId: string): Effect.Effect<void> =>
  Effect.promise(() =>
    conn
      .deleteFrom("agent_resolutions")
      .where("agent_id", "in", conn.selectFrom("agents").select("id").where("project_id", "=", projectId))
      .execute(),
  )
