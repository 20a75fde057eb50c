/**
 * A page's tables in the document viewer: drawn over the page image (or its laid-out text) as the boxes
 * of each table and its cells, and the page read as text, block by block, its tables as HTML tables with
 * their spans and header cells.
 */

import type { ContentBlockJson, ContentDocumentJson, ContentTableJson } from "@dxs/domain/Content"
import type { DocumentPage } from "@dxs/domain/Records"
import { useQuery } from "@tanstack/react-query"
import { errorMessage, seg } from "../api.ts"
import { ErrorAlert, Loading } from "../components.tsx"
import { apiQuery } from "../query.ts"

type Box = readonly [number, number, number, number]

const boxStyle = ([x0, y0, x1, y1]: Box, scale: number) => ({
  left: `${x0 * scale}px`,
  top: `${y0 * scale}px`,
  width: `${(x1 - x0) * scale}px`,
  height: `${(y1 - y0) * scale}px`,
})

const sizeOf = (t: DocumentPage["tables"][number]) =>
  `${t.rows.length} ${t.rows.length === 1 ? "row" : "rows"} × ${t.rows[0]?.length ?? 0} ${
    (t.rows[0]?.length ?? 0) === 1 ? "column" : "columns"
  }`

/**
 * The boxes of the page's tables and their cells, over a page shown `width` pixels wide; nothing for a page
 * without tables that have boxes (formats without coordinates).
 */
export function TablesOverlay({
  documentPath,
  pageNumber,
  width,
}: {
  readonly documentPath: string
  readonly pageNumber: number
  readonly width: number
}) {
  const page = useQuery(apiQuery<DocumentPage>(`${documentPath}/pages/${pageNumber}/`))
  const p = page.data
  if (p === undefined || !p.width) return null
  const scale = width / p.width
  const tables = p.tables.filter((t) => t.bbox !== null)
  return (
    <div className="tables-overlay" data-testid="tables-overlay" data-tables={tables.length}>
      {tables.map((t, i) => (
        <div
          key={i}
          className="table-box"
          role="img"
          aria-label={`Table ${i + 1}: ${sizeOf(t)}${t.continued ? ", continued from the previous page" : ""}`}
          style={boxStyle(t.bbox!, scale)}
        >
          {t.cells
            .filter((c) => c.bbox !== null)
            .map((c) => (
              <span
                key={`${c.row}:${c.column}`}
                className={c.header ? "cell-box header" : "cell-box"}
                title={c.text}
                style={boxStyle(
                  [
                    c.bbox![0] - t.bbox![0],
                    c.bbox![1] - t.bbox![1],
                    c.bbox![2] - t.bbox![0],
                    c.bbox![3] - t.bbox![1],
                  ],
                  scale,
                )}
              />
            ))}
        </div>
      ))}
    </div>
  )
}

/** A table as HTML: one row per grid row, each cell once with its spans, header cells as <th>. */
function TableView({ table, caption }: { readonly table: ContentTableJson; readonly caption: string }) {
  const rows = table.rows.length
  return (
    <table className="page-table">
      <caption className="visually-hidden">{caption}</caption>
      <tbody>
        {Array.from({ length: rows }, (_, r) => (
          <tr key={r}>
            {table.cells
              .filter((c) => c.row === r)
              .map((c) => {
                const Cell = c.header ? "th" : "td"
                return (
                  <Cell
                    key={c.column}
                    rowSpan={c.row_span > 1 ? c.row_span : undefined}
                    colSpan={c.column_span > 1 ? c.column_span : undefined}
                    scope={c.header ? "col" : undefined}
                  >
                    {c.text}
                  </Cell>
                )
              })}
          </tr>
        ))}
      </tbody>
    </table>
  )
}

function BlockView({ block, index }: { readonly block: ContentBlockJson; readonly index: number }) {
  switch (block.kind) {
    case "heading":
      return (block.level ?? 1) <= 1 ? <h2>{block.text}</h2> : <h3>{block.text}</h3>
    case "list_item":
      return (
        <p className="page-list-item" style={{ marginLeft: `${(block.level ?? 0) * 1.5}rem` }}>
          {block.text}
        </p>
      )
    case "table":
      return block.table === undefined ? null : (
        <TableView table={block.table} caption={`Table ${index + 1} of the page`} />
      )
    case "figure":
      return <p className="muted small">[Figure{block.text === "" ? "" : `: ${block.text}`}]</p>
    case "caption":
      return <p className="page-caption">{block.text}</p>
    case "page_header":
    case "page_footer":
      return <p className="muted small page-furniture">{block.text}</p>
    default:
      return <p className="page-paragraph">{block.text}</p>
  }
}

/** The page read as text: its blocks in reading order, tables as tables. */
export function PageBlocks({
  documentPath,
  pageNumber,
  label,
}: {
  readonly documentPath: string
  readonly pageNumber: number
  readonly label: string
}) {
  const content = useQuery(apiQuery<ContentDocumentJson>(`${documentPath}/content/?format=json`))
  if (content.data === undefined)
    return content.error ? <ErrorAlert message={errorMessage(content.error)} /> : <Loading what="the text" />
  const page = content.data.pages.find((p) => p.page_number === pageNumber)
  const blocks = page?.blocks ?? []
  let tables = 0
  return (
    <article
      className="viewer-page page-blocks"
      data-testid="viewer-text"
      data-page={pageNumber}
      aria-label={label}
    >
      {blocks.length === 0 && <p className="muted">This page has no text.</p>}
      {blocks.map((b, i) => (
        <BlockView key={i} block={b} index={b.kind === "table" ? tables++ : 0} />
      ))}
    </article>
  )
}

/** The path of a document's API resources. */
export const documentPathOf = (base: string, documentId: string) => `${base}/documents/${seg(documentId)}`
