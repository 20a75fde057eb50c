import type { ResolutionStatus } from "@dxs/domain/Enums"
import type { ResultsGrid as Grid, ResultsGridCell, ResultsGridColumn } from "@dxs/domain/Records"
import { keepPreviousData, useQuery } from "@tanstack/react-query"
import { type KeyboardEvent, useEffect, useRef, useState } from "react"
import { API_BASE, errorMessage, seg } from "../api.ts"
import { ConfidenceMark, ErrorAlert, formatValue, Loading, SelectField, statusClass } from "../components.tsx"
import { apiQuery } from "../query.ts"
import { Link, navigate, replaceQuery, useQueryString } from "../router.tsx"

const PAGE_SIZES = [5, 10, 25, 50, 100] as const
const SEARCH_DEBOUNCE_MS = 300

const STATUSES: ReadonlyArray<ResolutionStatus> = [
  "Resolved",
  "Requires attention",
  "Not resolved",
  "No result",
  "Ignored",
]

interface Filters {
  readonly agentId: string
  readonly status: string
  readonly dimensionValue: string
  readonly maxConfidence: string
  readonly search: string
  readonly review: string
  readonly source: string
}

/** What a cell's review and source say, as a mark beside its value and as words for screen readers. */
const REVIEW_MARKS: Readonly<Record<string, { readonly mark: string; readonly words: string }>> = {
  positive: { mark: "✓", words: "marked correct" },
  negative: { mark: "✗", words: "marked wrong" },
}

function ReviewMark({ review, source }: { readonly review: string | null; readonly source: string }) {
  const marks = [
    ...(review !== null && REVIEW_MARKS[review] ? [REVIEW_MARKS[review]!] : []),
    ...(source === "manual" ? [{ mark: "✎", words: "set by hand" }] : []),
  ]
  if (marks.length === 0) return null
  return (
    <span className="review-mark" data-testid="review-mark" title={marks.map((m) => m.words).join(", ")}>
      <span aria-hidden="true">{marks.map((m) => m.mark).join(" ")}</span>
      <span className="visually-hidden">{`, ${marks.map((m) => m.words).join(", ")}`}</span>
    </span>
  )
}

/** The query string of the filters and sort (without paging): shared by the grid and its export links. */
const filterParams = (filters: Filters, sort: string): URLSearchParams => {
  const params = new URLSearchParams()
  if (filters.agentId) params.set("agent_id", filters.agentId)
  if (filters.status) params.set("resolution_status", filters.status)
  if (filters.dimensionValue.trim()) params.set("dimension_value", filters.dimensionValue.trim())
  if (filters.maxConfidence) params.set("max_confidence", filters.maxConfidence)
  if (filters.search.trim()) params.set("search", filters.search.trim().slice(0, 200))
  if (filters.review) params.set("review_status", filters.review)
  if (filters.source) params.set("source", filters.source)
  if (sort !== "name") params.set("sort", sort)
  return params
}

/** `sort` for a click on a column's header: ascending first, then descending. */
const nextSort = (current: string, column: string): string => (current === column ? `-${column}` : column)

const ariaSort = (current: string, column: string): "ascending" | "descending" | "none" =>
  current === column ? "ascending" : current === `-${column}` ? "descending" : "none"

const withUnit = (text: string, column: ResultsGridColumn) =>
  column.unit && text !== "—" ? `${text} ${column.unit}` : text

/** A cell of the grid by its row and column on the page. */
interface CellAt {
  readonly row: number
  readonly col: number
}

/** The grid's filters as the query names of the page's URL (the API's names). */
const FILTER_PARAMS: ReadonlyArray<readonly [keyof Filters, string]> = [
  ["agentId", "agent_id"],
  ["status", "resolution_status"],
  ["dimensionValue", "dimension_value"],
  ["maxConfidence", "max_confidence"],
  ["search", "search"],
  ["review", "review_status"],
  ["source", "source"],
]
/** Every query name of the grid's state in the page's URL. */
const GRID_PARAMS = [...FILTER_PARAMS.map(([, name]) => name), "sort", "limit", "offset"]
const DEFAULT_PAGE_ROWS = 50

/** The grid's state read from the page's query (anything unknown or out of range: the default). */
const gridStateOf = (query: URLSearchParams) => {
  const filters = Object.fromEntries(FILTER_PARAMS.map(([key, name]) => [key, query.get(name) ?? ""])) as {
    [K in keyof Filters]: string
  }
  const limit = Number(query.get("limit"))
  const offset = Number(query.get("offset"))
  return {
    filters: filters as Filters,
    sort: query.get("sort") || "name",
    pageRows: (PAGE_SIZES as ReadonlyArray<number>).includes(limit) ? limit : DEFAULT_PAGE_ROWS,
    offset: Number.isInteger(offset) && offset > 0 ? offset : 0,
  }
}

/**
 * The grid's page, sort and filters, kept in the page's URL (so that Back from a result, or a shared link,
 * shows the same grid), and the query that reads it: the search and dimension value boxes ask the server
 * once typing pauses; a new filter, sort or page size starts again at the first page.
 */
function useGridQuery(base: string) {
  const query = useQueryString()
  const { filters, sort, pageRows, offset } = gridStateOf(query)
  const [searchText, setSearchText] = useState(filters.search)
  const [dimensionText, setDimensionText] = useState(filters.dimensionValue)

  /** The page's query with the grid's state changed (other parameters, such as the section, kept). */
  const update = (change: {
    readonly filters?: Partial<Filters>
    readonly sort?: string
    readonly pageRows?: number
    readonly offset?: number
  }) => {
    const next = new URLSearchParams(window.location.search)
    for (const name of GRID_PARAMS) next.delete(name)
    const f = { ...filters, ...change.filters }
    for (const [name, value] of filterParams(f, change.sort ?? sort)) next.set(name, value)
    const rows = change.pageRows ?? pageRows
    if (rows !== DEFAULT_PAGE_ROWS) next.set("limit", String(rows))
    const at = change.offset ?? offset
    if (at > 0) next.set("offset", String(at))
    replaceQuery(next)
  }

  // the text boxes ask the server once typing pauses
  const typed = { search: searchText, dimensionValue: dimensionText }
  const latest = useRef({ filters, update })
  latest.current = { filters, update }
  useEffect(() => {
    const t = setTimeout(() => {
      const { filters: f, update: u } = latest.current
      if (f.search.trim() === typed.search.trim() && f.dimensionValue.trim() === typed.dimensionValue.trim())
        return
      u({ filters: typed, offset: 0 })
    }, SEARCH_DEBOUNCE_MS)
    return () => clearTimeout(t)
  }, [typed.search, typed.dimensionValue])

  const params = filterParams(filters, sort)
  const pageParams = new URLSearchParams(params)
  pageParams.set("limit", String(pageRows))
  if (offset > 0) pageParams.set("offset", String(offset))
  const grid = useQuery({
    ...apiQuery<Grid>(`${base}/results/grid/?${pageParams.toString()}`),
    placeholderData: keepPreviousData,
  })

  const exportQuery = params.toString()
  const exportHref = (format: "csv" | "xlsx", withReview: boolean) =>
    `${API_BASE}${base}/results/export/?format=${format}${exportQuery ? `&${exportQuery}` : ""}${withReview ? "&include=confidence,review" : ""}`

  return {
    grid,
    offset,
    setOffset: (at: number) => update({ offset: at }),
    pageRows,
    setPageSize: (rows: number) => update({ pageRows: rows, offset: 0 }),
    sort,
    sortBy: (column: string) => update({ sort: nextSort(sort, column), offset: 0 }),
    filters,
    setFilter: (change: Partial<Filters>) => update({ filters: change, offset: 0 }),
    searchText,
    setSearchText,
    dimensionText,
    setDimensionText,
    exportHref,
  }
}

/**
 * Roving focus over the grid's cells: the one cell reached by Tab, moved by the arrow keys, Home and
 * End; Enter opens a cell's result.
 */
function useCellFocus(data: Grid | undefined) {
  const [active, setActive] = useState<CellAt>({ row: 0, col: 0 })
  const table = useRef<HTMLTableElement>(null)

  const focusCell = (row: number, col: number) => {
    const cell = table.current?.querySelector<HTMLElement>(`[data-cell="${row}:${col}"]`)
    if (cell) {
      setActive({ row, col })
      cell.focus()
    }
  }

  const onCellKey = (
    e: KeyboardEvent<HTMLTableCellElement>,
    row: number,
    col: number,
    href: string | null,
  ) => {
    if (!data) return
    const rows = data.rows.length
    const cols = data.columns.length
    const moves: Record<string, readonly [number, number]> = {
      ArrowUp: [Math.max(0, row - 1), col],
      ArrowDown: [Math.min(rows - 1, row + 1), col],
      ArrowLeft: [row, Math.max(0, col - 1)],
      ArrowRight: [row, Math.min(cols - 1, col + 1)],
      Home: [row, 0],
      End: [row, cols - 1],
    }
    const to = moves[e.key]
    if (to) {
      e.preventDefault()
      focusCell(to[0], to[1])
    } else if (e.key === "Enter" && href !== null) {
      e.preventDefault()
      navigate(href)
    }
  }

  // the one cell reached by Tab (roving focus), kept on the page when it gets shorter
  const current = data
    ? {
        row: Math.max(0, Math.min(active.row, data.rows.length - 1)),
        col: Math.max(0, Math.min(active.col, data.columns.length - 1)),
      }
    : active

  return { table, current, setActive, onCellKey }
}

type CellFocus = ReturnType<typeof useCellFocus>

/**
 * The project's results as a grid computed by the server (`GET …/results/grid/`): one row per combination
 * of dimension values, one column per agent; paged, sorted by a click on a header, filtered, and exported
 * with the same filters. Arrow keys move between cells; Enter opens a cell's result.
 */
export function ResultsGrid({ projectId }: { readonly projectId: string }) {
  const base = `/projects/${seg(projectId)}`
  const query = useGridQuery(base)
  const { grid, filters } = query
  const data = grid.data
  const focus = useCellFocus(data)

  return (
    <section aria-labelledby="results-heading" className="section">
      <h2 id="results-heading">Results</h2>
      <GridFilters
        filters={filters}
        searchText={query.searchText}
        onSearch={query.setSearchText}
        dimensionText={query.dimensionText}
        onDimension={query.setDimensionText}
        onFilter={query.setFilter}
        columns={data?.columns ?? []}
      />

      <ErrorAlert message={grid.error ? errorMessage(grid.error) : undefined} />
      {data === undefined ? (
        grid.error ? null : (
          <Loading what="results" />
        )
      ) : data.columns.length === 0 ? (
        <p className="muted">Create an agent and launch the pipeline to see results here.</p>
      ) : (
        <>
          {data.rows.length === 0 && (
            <p className="muted">
              {filterParams(filters, "name").toString() !== ""
                ? "No results match these filters."
                : "No results yet: launch the pipeline."}
            </p>
          )}
          <div className="table-wrap">
            <GridTable
              base={base}
              data={data}
              fetching={grid.isFetching}
              sort={query.sort}
              onSort={query.sortBy}
              focus={focus}
            />
          </div>
          <GridPaging
            data={data}
            offset={query.offset}
            pageRows={query.pageRows}
            onOffset={query.setOffset}
            onPageSize={query.setPageSize}
            exportHref={query.exportHref}
          />
          <ul className="legend" aria-label="Status colours">
            {STATUSES.map((s) => (
              <li key={s}>
                <span className={`swatch ${statusClass(s)}`} aria-hidden="true" />
                {s}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  )
}

/** The filters of the grid: a search (sent once typing pauses), agent, status, dimension value and more. */
function GridFilters({
  filters,
  searchText,
  onSearch,
  dimensionText,
  onDimension,
  onFilter,
  columns,
}: {
  readonly filters: Filters
  readonly searchText: string
  readonly onSearch: (text: string) => void
  readonly dimensionText: string
  readonly onDimension: (text: string) => void
  readonly onFilter: (change: Partial<Filters>) => void
  readonly columns: ReadonlyArray<ResultsGridColumn>
}) {
  return (
    <form className="grid-filters" aria-label="Filter results" onSubmit={(e) => e.preventDefault()}>
      <div className="field">
        <label htmlFor="grid-search">Search</label>
        <input
          id="grid-search"
          type="search"
          maxLength={200}
          value={searchText}
          onChange={(e) => onSearch(e.target.value)}
        />
      </div>
      <div className="field">
        <SelectField
          id="grid-agent"
          label="Agent"
          value={filters.agentId}
          any="Any agent"
          options={columns.map((c) => ({ value: c.agent_id, label: c.agent_name }))}
          onChange={(agentId) => onFilter({ agentId })}
        />
      </div>
      <div className="field">
        <SelectField
          id="grid-status"
          label="Status"
          value={filters.status}
          any="Any status"
          options={STATUSES}
          onChange={(status) => onFilter({ status })}
        />
      </div>
      <div className="field">
        <label htmlFor="grid-dimension-value">Dimension value</label>
        <input
          id="grid-dimension-value"
          aria-describedby="grid-dimension-value-hint"
          value={dimensionText}
          onChange={(e) => onDimension(e.target.value)}
        />
        <span id="grid-dimension-value-hint" className="muted small">
          Part of a value is enough
        </span>
      </div>
      <div className="field">
        <SelectField
          id="grid-confidence"
          label="Confidence at most"
          value={filters.maxConfidence}
          any="Any confidence"
          options={[
            { value: "0.25", label: "25 %" },
            { value: "0.5", label: "50 %" },
            { value: "0.75", label: "75 %" },
          ]}
          onChange={(maxConfidence) => onFilter({ maxConfidence })}
        />
      </div>
      <div className="field">
        <SelectField
          id="grid-review"
          label="Review"
          value={filters.review}
          any="Any review"
          options={[
            { value: "none", label: "Not reviewed" },
            { value: "positive", label: "Marked correct" },
            { value: "negative", label: "Marked wrong" },
          ]}
          onChange={(review) => onFilter({ review })}
        />
      </div>
      <div className="field">
        <SelectField
          id="grid-source"
          label="Value from"
          value={filters.source}
          any="Model or by hand"
          options={[
            { value: "model", label: "Model" },
            { value: "manual", label: "Set by hand" },
          ]}
          onChange={(source) => onFilter({ source })}
        />
      </div>
    </form>
  )
}

/** The page of the grid: a header per agent (a click sorts by it), a row per combination of dimension values. */
function GridTable({
  base,
  data,
  fetching,
  sort,
  onSort,
  focus,
}: {
  readonly base: string
  readonly data: Grid
  readonly fetching: boolean
  readonly sort: string
  readonly onSort: (column: string) => void
  readonly focus: CellFocus
}) {
  return (
    <table className="data-table matrix" data-testid="results-grid" ref={focus.table} aria-busy={fetching}>
      <caption className="visually-hidden">Results</caption>
      <thead>
        <tr>
          <th scope="col" aria-sort={ariaSort(sort, "name")}>
            <button type="button" className="link-button sort-button" onClick={() => onSort("name")}>
              Row
            </button>
          </th>
          {data.columns.map((c) => (
            <th
              scope="col"
              key={c.agent_id}
              data-agent-id={c.agent_id}
              aria-sort={ariaSort(sort, `agent:${c.agent_id}`)}
            >
              <button
                type="button"
                className="link-button sort-button"
                onClick={() => onSort(`agent:${c.agent_id}`)}
              >
                {c.agent_name}
                {c.unit && <span className="muted small"> ({c.unit})</span>}
              </button>
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {data.rows.map((row, r) => (
          <tr key={row.key} data-row={row.key}>
            <th scope="row">{row.name}</th>
            {data.columns.map((c, col) => (
              <GridCell
                key={c.agent_id}
                base={base}
                column={c}
                cell={row.cells[c.agent_id]}
                at={{ row: r, col }}
                focus={focus}
              />
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  )
}

/** One cell of the grid: the agent's value for the row (a link to its result), or a mark for none yet. */
function GridCell({
  base,
  column: c,
  cell,
  at,
  focus,
}: {
  readonly base: string
  readonly column: ResultsGridColumn
  readonly cell: ResultsGridCell | undefined
  readonly at: CellAt
  readonly focus: CellFocus
}) {
  const { row: r, col } = at
  const common = {
    "data-cell": `${r}:${col}`,
    "data-agent-id": c.agent_id,
    tabIndex: focus.current.row === r && focus.current.col === col ? 0 : -1,
    onFocus: () => focus.setActive({ row: r, col }),
  }
  if (!cell)
    return (
      <td {...common} className="empty-cell" onKeyDown={(e) => focus.onCellKey(e, r, col, null)}>
        <span aria-hidden="true">·</span>
        <span className="visually-hidden">No result yet</span>
      </td>
    )
  const href = `${base}/agents/${seg(c.agent_id)}/${seg(cell.resolution_result_id)}`
  return (
    <td
      {...common}
      data-status={cell.resolution_status}
      title={cell.resolution_status}
      className={`result-cell ${statusClass(cell.resolution_status)}`}
      onKeyDown={(e) => focus.onCellKey(e, r, col, href)}
    >
      <Link href={href} tabIndex={-1}>
        {withUnit(formatValue(cell.value), c)}
      </Link>
      <span className="visually-hidden">{`, ${cell.resolution_status}`}</span>
      <ReviewMark review={cell.latest_review_status} source={cell.source} />
      <ConfidenceMark confidence={cell.confidence} />
    </td>
  )
}

/** Previous and next page, the rows shown, the page size, and the exports with the same filters. */
function GridPaging({
  data,
  offset,
  pageRows,
  onOffset,
  onPageSize,
  exportHref,
}: {
  readonly data: Grid
  readonly offset: number
  readonly pageRows: number
  readonly onOffset: (offset: number) => void
  readonly onPageSize: (rows: number) => void
  readonly exportHref: (format: "csv" | "xlsx", withReview: boolean) => string
}) {
  const [withReview, setWithReview] = useState(false)
  const from = data.rows.length > 0 ? offset + 1 : 0
  const to = offset + data.rows.length
  return (
    <div className="grid-paging">
      <button
        type="button"
        onClick={() => onOffset(Math.max(0, offset - pageRows))}
        disabled={data.previous === null}
      >
        Previous
      </button>
      <span data-testid="grid-range" aria-live="polite">
        Rows {from}–{to} of {data.count}
      </span>
      <button type="button" onClick={() => onOffset(offset + pageRows)} disabled={data.next === null}>
        Next
      </button>
      <SelectField
        id="grid-page-size"
        label="Rows per page"
        value={pageRows}
        options={PAGE_SIZES}
        onChange={(v) => onPageSize(Number(v))}
      />
      <label className="export-option">
        <input type="checkbox" checked={withReview} onChange={(e) => setWithReview(e.target.checked)} />
        Export with confidence and review
      </label>
      <a className="button-link" href={exportHref("csv", withReview)} download data-testid="export-csv">
        Export CSV
      </a>
      <a className="button-link" href={exportHref("xlsx", withReview)} download data-testid="export-xlsx">
        Export XLSX
      </a>
    </div>
  )
}
