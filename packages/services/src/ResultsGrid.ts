/**
 * The results grid and its export (beyond the contract): the project's current results as a matrix, one
 * row per combination of dimension values (`@dxs/db`'s `ALL_DOCUMENTS` or the result name) and one column
 * per agent, oldest first. The rows are sorted, filtered and paged in the database; an export walks them
 * batch by batch (a keyset cursor) into a CSV or XLSX writer, so a project is never held in memory.
 */
import type { Conn, Database } from "@dxs/db"
import * as ProjectsRepo from "@dxs/db/repositories/Projects"
import * as ResultsRepo from "@dxs/db/repositories/Results"
import type {
  ResultsExportFormat,
  ResultsExportInclude,
  ResultsGridCell,
  ResultsGridColumn,
} from "@dxs/domain/contract/Result"
import { ResultsExportFormats, ResultsExportIncludes, ValueSources } from "@dxs/domain/contract/Result"
import {
  type AgentValueType,
  type ResolutionStatus,
  ResolutionStatuses,
  ReviewStatuses,
} from "@dxs/domain/Enums"
import { csvBytes, TABLE_FORMATS, type TableRow, xlsxBytes } from "@dxs/pipeline/export/Table"
import { Effect, Option, Schema, Sink, Stream } from "effect"
import type { Kysely } from "kysely"
import { BadRequest, NotFound } from "./Errors.ts"
import { envelopeHead, pageLinks, pageStart, piecesBytes } from "./Paging.ts"

export const GRID_DEFAULT_LIMIT = 50
export const GRID_MAX_LIMIT = 500
export const GRID_SEARCH_MAX_LENGTH = 200
/** Rows an export reads from the database at a time. */
export const EXPORT_FETCH_ROWS = 500

export interface ResultsGridFilters {
  readonly agent_id?: string | undefined
  readonly resolution_status?: ResolutionStatus | undefined
  readonly dimension_value?: string | undefined
  /** Rows with a cell of this document (beyond the contract, as the grid is). */
  readonly document_id?: string | undefined
  readonly max_confidence?: number | undefined
  readonly search?: string | undefined
  /** Rows with a cell whose latest review is this: `none` (never reviewed), `positive`, `negative`. */
  readonly review_status?: string | undefined
  /** Rows with a cell whose value is the model's (`model`) or set by hand (`manual`). */
  readonly source?: string | undefined
  /** `name` (default), `-name`, `agent:<agent id>`, `-agent:<agent id>`. */
  readonly sort?: string | undefined
}

export interface ResultsGridQuery extends ResultsGridFilters {
  readonly limit?: number | undefined
  readonly offset?: number | undefined
  /** Beyond the contract: where the page starts, from a `next` or `previous` link. */
  readonly cursor?: string | undefined
}

/** The key of a grid row, as a cursor carries it (see the repository's `GridKey`). */
const GridCursorKey = Schema.Tuple(
  Schema.Literal(0, 1),
  Schema.Int,
  Schema.String.pipe(Schema.pattern(/^-?\d+(\.\d+)?$/), Schema.maxLength(200)),
  Schema.String.pipe(Schema.maxLength(200)),
  Schema.Int,
  Schema.String.pipe(Schema.maxLength(200)),
  Schema.String.pipe(Schema.maxLength(200)),
  Schema.UUID,
)

export interface ResultsExportQuery extends ResultsGridFilters {
  readonly format?: string | undefined
  /** Columns to add per agent, comma-separated: `confidence`, `review`. */
  readonly include?: string | undefined
}

/** A file being written: its name, type and bytes as they are made. */
export interface ResultsExport {
  readonly fileName: string
  readonly contentType: string
  readonly body: Stream.Stream<Uint8Array>
}

const invalid = (path: string, message: string) => BadRequest.of(`${path} ${message}`, [{ path, message }])

const SORT =
  /^(-?)(name|agent:([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}))$/

/** The filters checked (400 naming the bad one), with the sort's agent still to be found. */
const checkFilters = (q: ResultsGridFilters) =>
  Effect.gen(function* () {
    if (
      q.resolution_status !== undefined &&
      !(ResolutionStatuses as ReadonlyArray<string>).includes(q.resolution_status)
    )
      return yield* invalid("resolution_status", `must be one of ${ResolutionStatuses.join(", ")}`)
    if (
      q.max_confidence !== undefined &&
      !(Number.isFinite(q.max_confidence) && q.max_confidence >= 0 && q.max_confidence <= 1)
    )
      return yield* invalid("max_confidence", "must be a number from 0 to 1")
    if (q.search !== undefined && (q.search.length < 1 || q.search.length > GRID_SEARCH_MAX_LENGTH))
      return yield* invalid("search", `must be 1 to ${GRID_SEARCH_MAX_LENGTH} characters`)
    if (q.search?.includes("\u0000")) return yield* invalid("search", "must not contain NUL")
    if (q.dimension_value?.includes("\u0000"))
      return yield* invalid("dimension_value", "must not contain NUL")
    if (q.review_status !== undefined && !(ReviewStatuses as ReadonlyArray<string>).includes(q.review_status))
      return yield* invalid("review_status", `must be one of ${ReviewStatuses.join(", ")}`)
    if (q.source !== undefined && !(ValueSources as ReadonlyArray<string>).includes(q.source))
      return yield* invalid("source", `must be one of ${ValueSources.join(", ")}`)
    const sort = q.sort ?? "name"
    const m = SORT.exec(sort)
    if (m === null)
      return yield* invalid("sort", "must be name, -name, agent:<agent id> or -agent:<agent id>")
    return {
      filter: {
        agentId: q.agent_id,
        resolutionStatus: q.resolution_status,
        dimensionValue: q.dimension_value,
        documentId: q.document_id,
        maxConfidence: q.max_confidence,
        search: q.search,
        reviewStatus: q.review_status as ResultsRepo.GridFilter["reviewStatus"],
        source: q.source as ResultsRepo.GridFilter["source"],
      } satisfies ResultsRepo.GridFilter,
      descending: m[1] === "-",
      sortAgentId: m[3]?.toLowerCase(),
    }
  })

type Columns = ResultsRepo.GridContext["columns"]

/** The grid's sort, from the checked query and the project's columns: 400 when it names no agent of the project. */
const sortOf = (columns: Columns, descending: boolean, sortAgentId: string | undefined) => {
  if (sortAgentId === undefined) return Effect.succeed<ResultsRepo.GridSort>({ by: "name", descending })
  const agent = columns.find((c) => c.id === sortAgentId)
  return agent === undefined
    ? invalid("sort", "names no agent of the project")
    : Effect.succeed<ResultsRepo.GridSort>({
        by: "agent",
        agentId: agent.id,
        valueType: agent.value_type,
        descending,
      })
}

/** The grid's filter, sort, columns and dimension names (the project's context in one statement; 404 if not the organisation's). */
const setting = (db: Conn, orgId: string, projectId: string, q: ResultsGridFilters) =>
  Effect.gen(function* () {
    const { filter, descending, sortAgentId } = yield* checkFilters(q)
    const context = yield* ResultsRepo.gridContext(db, orgId, projectId)
    if (!context.found) return yield* NotFound.of("Project", projectId)
    const sort = yield* sortOf(context.columns, descending, sortAgentId)
    const names: ReadonlyMap<string, string> = new Map(Object.entries(context.names))
    return { filter, sort, columns: context.columns, names }
  })

const dimensionValuesOf = (row: ResultsRepo.GridRow, names: ReadonlyMap<string, string>) =>
  Object.fromEntries(
    row.dimension_values.map((d) => [names.get(d.dimension_id) ?? d.name, d.dimension_value]),
  )

/** A grid page whose rows the database built as JSON, with its links and columns. */
export interface GridJsonPage {
  readonly count: number
  readonly next: string | null
  readonly previous: string | null
  readonly columns: ReadonlyArray<ResultsGridColumn>
  /** Each row's JSON, in order (see the repository's `GridPageJson`). */
  readonly rowsJson: ReadonlyArray<string>
}

/**
 * The grid envelope's JSON (UTF-8): `count`, `next`, `previous`, `columns`, then the rows as they are, made
 * without a joined string (see `piecesBytes`).
 */
export const gridPageBytes = (page: GridJsonPage): Buffer =>
  piecesBytes(
    envelopeHead(page, `"columns":${JSON.stringify(page.columns)},"rows":[`),
    page.rowsJson.flatMap((row, i) => (i === 0 ? [row] : [",", row])),
    "]}",
  )

/** One page of the project's results grid, its rows built as JSON by the database. */
export const gridOf = (
  db: Conn,
  orgId: string,
  projectId: string,
  q: ResultsGridQuery,
  page: { readonly limit: number; readonly offset: number },
) =>
  Effect.gen(function* () {
    const start = yield* pageStart(GridCursorKey, q)
    const { filter, sort, columns } = yield* setting(db, orgId, projectId, q)
    const { limit } = page
    const found = yield* ResultsRepo.gridPageJson(
      db,
      projectId,
      filter,
      sort,
      start === undefined ? page : { limit, ...start },
    )
    const { count, offset } = found
    return {
      count,
      ...pageLinks(
        (
          [
            "agent_id",
            "resolution_status",
            "dimension_value",
            "document_id",
            "max_confidence",
            "review_status",
            "source",
            "search",
            "sort",
          ] as const
        ).map((name) => [name, q[name]] as const),
        { count, limit, offset, rows: found.rows, first: found.first, last: found.last },
      ),
      columns: columns.map(
        (c): ResultsGridColumn => ({
          agent_id: c.id,
          agent_name: c.name,
          value_type: c.value_type as AgentValueType,
          unit: c.unit === "" ? null : c.unit,
        }),
      ),
      rowsJson: found.json,
    } satisfies GridJsonPage
  })

/** A value as a person reads it, with the agent's unit after it when it has one; empty for none. */
const displayed = (value: ResultsGridCell["value"], unit: string) => {
  if (value === null || value === "") return ""
  const text = typeof value === "boolean" ? (value ? "true" : "false") : String(value)
  return unit === "" ? text : `${text} ${unit}`
}

/** The export's format (csv by default), or 400. */
export const checkExportFormat = (format: string | undefined) =>
  (ResultsExportFormats as ReadonlyArray<string>).includes(format ?? "csv")
    ? Effect.succeed((format ?? "csv") as ResultsExportFormat)
    : invalid("format", `must be one of ${ResultsExportFormats.join(", ")}`)

/** The export's added columns (`include`, comma-separated, each at most once), or 400. */
export const checkExportIncludes = (include: string | undefined) => {
  if (include === undefined || include.trim() === "")
    return Effect.succeed<ReadonlySet<ResultsExportInclude>>(new Set())
  const names = include.split(",").map((n) => n.trim())
  const unknown = names.find((n) => !(ResultsExportIncludes as ReadonlyArray<string>).includes(n))
  return unknown === undefined
    ? Effect.succeed<ReadonlySet<ResultsExportInclude>>(new Set(names as Array<ResultsExportInclude>))
    : invalid(
        "include",
        `names ${JSON.stringify(unknown.slice(0, 40))}: must be a comma-separated list of ${ResultsExportIncludes.join(", ")}`,
      )
}

/**
 * The project's grid as a file: `Row`, one column per dimension, then per agent its value (with its
 * unit), status and citations (`<document> p.<page>`, joined by `; `), and with `include` its confidence
 * (0 to 1) and review (`positive`, `negative`, `none`; `manual` after it when the value was set by hand). The header is known before the
 * first row is read (the dimensions and agents of the project); the rows are read in batches as the
 * writer asks for them.
 */
export const exportOf = (db: Kysely<Database>, orgId: string, projectId: string, q: ResultsExportQuery) =>
  Effect.gen(function* () {
    const format = yield* checkExportFormat(q.format)
    const includes = yield* checkExportIncludes(q.include)
    const withConfidence = includes.has("confidence")
    const withReview = includes.has("review")
    const project = yield* ProjectsRepo.findProject(db, orgId, projectId)
    if (project === undefined) return yield* NotFound.of("Project", projectId)
    const { filter, sort, columns, names } = yield* setting(db, orgId, projectId, q)
    const dimensionNames = [...new Set(names.values())]
    const header: TableRow = [
      "Row",
      ...dimensionNames,
      ...columns.flatMap((c) => [
        c.name,
        `${c.name} status`,
        `${c.name} citations`,
        ...(withConfidence ? [`${c.name} confidence`] : []),
        ...(withReview ? [`${c.name} review`, `${c.name} source`] : []),
      ]),
    ]
    const toLine = (r: ResultsRepo.GridRow): TableRow => {
      const dims = dimensionValuesOf(r, names)
      return [
        r.name,
        ...dimensionNames.map((d) => dims[d] ?? ""),
        ...columns.flatMap((c) => {
          const cell = r.cells.get(c.id)
          const width = 3 + (withConfidence ? 1 : 0) + (withReview ? 2 : 0)
          if (cell === undefined) return Array.from({ length: width }, () => "")
          return [
            displayed(cell.value as ResultsGridCell["value"], c.unit),
            cell.resolution_status,
            cell.sources.map((s) => `${s.document_name} p.${s.page_number}`).join("; "),
            ...(withConfidence ? [cell.confidence] : []),
            ...(withReview
              ? [cell.latest_review_status ?? "none", cell.is_overridden ? "manual" : "model"]
              : []),
          ]
        }),
      ]
    }
    // The first batch is read before the answer starts, so a query that cannot run fails as a problem
    // before the first byte rather than as a 200 with a header and nothing else (a later failure aborts
    // the connection: see the REST adapter's download).
    const [first, rest] = yield* Stream.peel(
      ResultsRepo.gridRows(db, projectId, filter, sort, EXPORT_FETCH_ROWS),
      Sink.head<ReadonlyArray<ResultsRepo.GridRow>>(),
    )
    const batches: Stream.Stream<ReadonlyArray<TableRow>> = Stream.map(
      Stream.concat(Stream.fromIterable(Option.toArray(first)), rest),
      (rows) => rows.map(toLine),
    )
    const kind = TABLE_FORMATS[format]
    return {
      fileName: `${project.name}-results.${kind.extension}`,
      contentType: kind.contentType,
      body: format === "csv" ? csvBytes(header, batches) : xlsxBytes("Results", header, batches),
    } satisfies ResultsExport
  })
