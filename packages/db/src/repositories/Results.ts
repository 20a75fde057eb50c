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

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

/** True when the agent is still at this config version; its row is share-locked until the transaction ends. */
export const agentStillAt = (conn: Conn, agentId: string, configVersion: number): Effect.Effect<boolean> =>
  Effect.map(agentsStillAt(conn, [{ agentId, configVersion }]), (current) => current.has(agentId))

/** Of the agents, those still at the given config version (each row locked for share), in one statement. */
export const agentsStillAt = (
  conn: Conn,
  agents: ReadonlyArray<{ readonly agentId: string; readonly configVersion: number }>,
): Effect.Effect<ReadonlySet<string>> =>
  agents.length === 0
    ? Effect.succeed(new Set<string>())
    : run(() =>
        conn
          .selectFrom("agents")
          .select(["id", "config_version"])
          .where(
            "id",
            "in",
            agents.map((a) => a.agentId),
          )
          .orderBy("id")
          .forShare()
          .execute(),
      ).pipe(
        Effect.map((rows) => {
          const wanted = new Map(agents.map((a) => [a.agentId, a.configVersion]))
          return new Set(rows.filter((r) => wanted.get(r.id) === r.config_version).map((r) => r.id))
        }),
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
      confidence: row.confidence ?? null,
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
        confidence: sql`case when ${eb.ref("resolution_results.is_overridden")} and ${eb.ref("resolution_results.agent_config_version")} = ${configVersion} then resolution_results.confidence else ${row.confidence ?? null}::real end`,
        is_overridden: sql`${eb.ref("resolution_results.is_overridden")} and ${eb.ref("resolution_results.agent_config_version")} = ${configVersion}`,
        updated_by_email: sql`case when ${eb.ref("resolution_results.agent_config_version")} = ${configVersion} then resolution_results.updated_by_email else null end`,
        agent_config_version: configVersion,
        updated_at: sql`now()`,
      })),
    )
    .execute()

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
