import type { ContentFormat } from "@dxs/domain/Content"
import type { Document } from "@dxs/domain/Records"
import { Pages } from "@dxs/services"
import { Effect } from "effect"
import type { GraphqlContext } from "./Context.ts"

/**
 * Documents read as structure (beyond the contract): a page's tables as cells, and a document's whole
 * content in reading order (REST GET …/pages/{n}/ `tables` and GET …/content/?format=).
 */
export const contentTypeDefs = /* GraphQL */ `
  "How a document's content is written out."
  enum ContentFormat {
    "Headings, paragraphs, lists and tables (GitHub tables; HTML tables where spans need them)."
    MARKDOWN
    "A JSON document: pages, each with its blocks (kind, page, text, bbox, level, table) in reading order."
    JSON
    "The pages' text."
    TEXT
  }

  "A table of a page, as cells."
  type Table {
    "[x0, y0, x1, y1], top-left origin, in the page's unit; null for formats without coordinates."
    bbox: [Float!]
    "The full grid, top row first: a spanning cell's text at its top-left position, empty strings where it spans."
    rows: [[String!]!]!
    """
    Every cell once, by row then column, as REST gives them (JSON, as Page.layout, so that a query of many
    documents' tables stays within the cost limit): {row, column, row_span, column_span, text, header, bbox}.
    """
    cells: JSON!
    "The table goes on from the previous page."
    continued: Boolean!
  }

  extend type Page {
    "The page's tables, top to bottom."
    tables: [Table!]!
  }

  extend type Document {
    "The whole document in reading order (NOT_FOUND until it is processed); an e-mail's attachments follow it."
    content(format: ContentFormat = MARKDOWN): String!
  }
`

export const contentResolvers = {
  Document: {
    content: (d: Document, args: { format?: string | null }, ctx: GraphqlContext) =>
      ctx.run(
        Effect.flatMap(Pages, (p) =>
          p.content(d.project_id, d.id, (args.format ?? "MARKDOWN").toLowerCase() as ContentFormat),
        ),
      ),
  },
}
