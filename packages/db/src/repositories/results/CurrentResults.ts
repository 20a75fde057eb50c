/**
 * The current results as the API reads them (part of the results aggregate, see `../Results.ts`): a result
 * counts only while its agent is published and at the config version it was resolved for, so a result of
 * an earlier configuration is absent until the next launch replaces it.
 */
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../../Db.ts"
import type { ExtractionRow } from "../../Schema.ts"

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

const currentResults = (conn: Conn, projectId: string) =>
  conn
    .selectFrom("resolution_results as rr")
    .innerJoin("agents as a", (j) =>
      j.onRef("a.id", "=", "rr.agent_id").onRef("a.config_version", "=", "rr.agent_config_version"),
    )
    .innerJoin("atomic_values as av", "av.id", "rr.atomic_value_id")
    .where("rr.project_id", "=", projectId)
    .where("a.project_id", "=", projectId)
    .where("a.is_draft", "=", false)

const resultColumns = [
  "rr.id",
  "rr.atomic_value_id",
  "rr.agent_id",
  "rr.agent_config_version",
  "rr.result_name",
  "rr.value",
  "rr.resolution_status",
  "rr.justification",
  "rr.references",
  "rr.sources",
  "rr.source_type",
  "rr.is_web_supplement",
  "rr.web_supplement",
  "rr.is_overridden",
  "rr.updated_by_email",
  "rr.latest_review_status",
  "rr.latest_review_comment",
  "rr.latest_review_at",
  "rr.latest_review_by",
  "rr.created_at",
  "rr.updated_at",
  "rr.confidence",
  "a.name as agent_name",
  "a.value_type",
  "a.unit",
  "av.dimension_values",
] as const

const selectCurrent = (conn: Conn, projectId: string) =>
  currentResults(conn, projectId).select([...resultColumns])

/** A current result with its agent's name, value type and unit, and its atomic value's dimension values. */
export type CurrentResultRow = Awaited<
  ReturnType<ReturnType<typeof selectCurrent>["executeTakeFirstOrThrow"]>
>

/** The project's current result `resultId`. */
export const findCurrentResult = (
  conn: Conn,
  projectId: string,
  resultId: string,
): Effect.Effect<CurrentResultRow | undefined> =>
  run(() => selectCurrent(conn, projectId).where("rr.id", "=", resultId).executeTakeFirst())

export interface CurrentResultsFilter {
  readonly agentId?: string | undefined
  readonly resolutionStatus?: string | undefined
  /** Results with a dimension instance of exactly this value. */
  readonly dimensionValue?: string | undefined
  /** Results whose confidence is at or below this (0 to 1), listed least confident first. */
  readonly maxConfidence?: number | undefined
}

export interface RowWindow {
  readonly limit: number
  readonly offset: number
}

/**
 * The project's current results that pass `filter`, by agent (oldest first) then result name (with
 * `maxConfidence`, least confident first, then so), one window of them, with how many pass in all.
 */
export const listCurrentResults = (
  conn: Conn,
  projectId: string,
  filter: CurrentResultsFilter,
  window: RowWindow,
): Effect.Effect<{ readonly count: number; readonly rows: ReadonlyArray<CurrentResultRow> }> => {
  const filtered = () => {
    let q = currentResults(conn, projectId)
    if (filter.agentId !== undefined) q = q.where("rr.agent_id", "=", filter.agentId)
    if (filter.resolutionStatus !== undefined)
      q = q.where("rr.resolution_status", "=", filter.resolutionStatus)
    if (filter.dimensionValue !== undefined)
      q = q.where(
        sql<boolean>`av.dimension_values @> ${JSON.stringify([{ dimension_value: filter.dimensionValue }])}::jsonb`,
      )
    if (filter.maxConfidence !== undefined)
      // real against real: 0.3 as a double would exceed a stored 0.3 (its float4 rounding).
      q = q.where(sql<boolean>`rr.confidence <= ${filter.maxConfidence}::real`)
    return q
  }
  return run(async () => {
    const [total, rows] = await Promise.all([
      filtered().select(sql<number>`count(*)::int`.as("n")).executeTakeFirstOrThrow(),
      (filter.maxConfidence === undefined
        ? filtered().select([...resultColumns])
        : filtered()
            .select([...resultColumns])
            .orderBy("rr.confidence")
      )
        .orderBy("a.created_at")
        .orderBy("a.id")
        .orderBy("rr.result_name")
        .orderBy("rr.id")
        .limit(window.limit)
        .offset(window.offset)
        .execute(),
    ])
    return { count: total.n, rows }
  })
}

/** An extraction behind a result, with the name of its document (null for a web or derived one). */
export type ResultExtractionRow = ExtractionRow & { readonly document_name: string | null }

/**
 * The extractions a result was resolved from (its atomic value's, at the result's config version): web
 * ones first, then consistent (true, false, not yet evaluated), then by document name and page; one window
 * of them, with how many there are.
 */
export const extractionsOfResult = (
  conn: Conn,
  result: { readonly atomicValueId: string; readonly agentId: string; readonly agentConfigVersion: number },
  window: RowWindow,
): Effect.Effect<{ readonly total: number; readonly rows: ReadonlyArray<ResultExtractionRow> }> => {
  const base = () =>
    conn
      .selectFrom("extractions as e")
      .leftJoin("documents as d", "d.id", "e.document_id")
      .where("e.atomic_value_id", "=", result.atomicValueId)
      .where("e.agent_id", "=", result.agentId)
      .where("e.agent_config_version", "=", result.agentConfigVersion)
  return run(async () => {
    const [total, rows] = await Promise.all([
      base().select(sql<number>`count(*)::int`.as("n")).executeTakeFirstOrThrow(),
      base()
        .selectAll("e")
        .select("d.file_name as document_name")
        .orderBy(sql`(e.source_type = 'web')`, "desc")
        .orderBy(sql`case when e.consistent then 0 when not e.consistent then 1 else 2 end`)
        .orderBy(sql`d.file_name nulls last`)
        .orderBy(sql`e.page_number nulls last`)
        .orderBy("e.extracted_at")
        .orderBy("e.id")
        .limit(window.limit)
        .offset(window.offset)
        .execute(),
    ])
    return { total: total.n, rows }
  })
}
