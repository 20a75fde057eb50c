/**
 * The parsed pages of documents: written by the parse stage, read by the API and by retrieval (full-text
 * ranking over `pages.tsv`). Driver errors are defects.
 */
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../Db.ts"
import type { PageRow } from "../Schema.ts"

/** Pages per INSERT when a parse writes them. */
const PAGE_INSERT_BATCH = 100

/** A page as the parse stage writes it (`layout`, `tables` and `blocks` as JSON strings). */
export interface NewPage {
  readonly document_id: string
  readonly number: number
  readonly text: string
  readonly layout: string
  /** Empty when left out. */
  readonly tables?: string
  readonly blocks?: string
  readonly width: number | null
  readonly height: number | null
  readonly unit: string | null
}

/** Replaces the document's pages with `pages` (none: the document has no pages). */
export const replacePages = (
  trx: Conn,
  documentId: string,
  pages: ReadonlyArray<NewPage>,
): Effect.Effect<void> =>
  Effect.promise(async () => {
    await trx.deleteFrom("pages").where("document_id", "=", documentId).execute()
    for (let i = 0; i < pages.length; i += PAGE_INSERT_BATCH)
      await trx
        .insertInto("pages")
        .values(pages.slice(i, i + PAGE_INSERT_BATCH))
        .execute()
  })

export type PageContent = Pick<
  PageRow,
  "number" | "text" | "layout" | "tables" | "blocks" | "width" | "height" | "unit"
>

/** Page `pageNumber` (1-based) of the document. */
export const findPage = (
  db: Conn,
  documentId: string,
  pageNumber: number,
): Effect.Effect<PageContent | undefined> =>
  Effect.promise(() =>
    db
      .selectFrom("pages")
      .select(["number", "text", "layout", "tables", "blocks", "width", "height", "unit"])
      .where("document_id", "=", documentId)
      .where("number", "=", pageNumber)
      .executeTakeFirst(),
  )

/** The pages of the documents among `documentIds` that are the organisation's, by document then number. */
export const pagesOfDocuments = (
  db: Conn,
  orgId: string,
  documentIds: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<PageContent & { readonly document_id: string }>> =>
  Effect.promise(() =>
    db
      .selectFrom("pages as pg")
      .innerJoin("documents as d", "d.id", "pg.document_id")
      .innerJoin("projects as p", "p.id", "d.project_id")
      .select([
        "pg.document_id",
        "pg.number",
        "pg.text",
        "pg.layout",
        "pg.tables",
        "pg.blocks",
        "pg.width",
        "pg.height",
        "pg.unit",
      ])
      .where("p.organization_id", "=", orgId)
      .where("pg.document_id", "in", documentIds)
      .orderBy("pg.document_id")
      .orderBy("pg.number")
      .execute(),
  )

/**
 * The layout and tables of each of these pages that exists (the pages extractions cite), in no particular
 * order.
 */
export const pageLayouts = (
  db: Conn,
  pages: ReadonlyArray<{ readonly documentId: string; readonly pageNumber: number }>,
): Effect.Effect<
  ReadonlyArray<Pick<PageRow, "document_id" | "number" | "layout" | "tables" | "width" | "height" | "unit">>
> =>
  pages.length === 0
    ? Effect.succeed([])
    : Effect.promise(() =>
        db
          .selectFrom("pages")
          .select(["document_id", "number", "layout", "tables", "width", "height", "unit"])
          .where(({ eb, refTuple, tuple }) =>
            eb(
              refTuple("document_id", "number"),
              "in",
              pages.map((p) => tuple(p.documentId, p.pageNumber)),
            ),
          )
          .execute(),
      )

export interface RankedPage {
  readonly document_id: string
  readonly document_name: string
  readonly page_number: number
  readonly score: number
  readonly snippet: string | null
  readonly text: string
}

/**
 * The pages of the project's live processed documents (optionally one document) that match the
 * `to_tsquery` text `query`, best first (ties: document name, page number), at most `limit`, with an excerpt.
 */
export const rankPagesOfProject = (
  db: Conn,
  input: {
    readonly projectId: string
    readonly query: string
    readonly documentId?: string | undefined
    readonly limit: number
  },
): Effect.Effect<ReadonlyArray<RankedPage>> =>
  Effect.promise(async () => {
    const onlyDocument = input.documentId === undefined ? sql`` : sql`and d.id = ${input.documentId}`
    // Rank first, then draw excerpts only for the pages kept (ts_headline re-parses the page text).
    const { rows } = await sql<RankedPage>`
      with q as (select to_tsquery('english', ${input.query}) as q),
      ranked as (
        select d.id as document_id, d.file_name as document_name, p.number as page_number,
          ts_rank_cd(p.tsv, q.q, 32) as score, p.text
        from pages p
        join documents d on d.id = p.document_id
        cross join q
        where d.project_id = ${input.projectId}
          and d.status = 'Processed'
          and d.archive_requested_at is null
          ${onlyDocument}
          and p.tsv @@ q.q
        order by score desc, d.file_name, d.id, p.number
        limit ${input.limit}
      )
      select r.document_id, r.document_name, r.page_number, r.score, r.text,
        ts_headline('english', left(r.text, 100000), q.q,
          'MaxWords=30, MinWords=8, MaxFragments=1, StartSel="", StopSel=""') as snippet
      from ranked r cross join q
      order by r.score desc, r.document_name, r.document_id, r.page_number
    `.execute(db)
    return rows
  })

/** How many pages a document has, their characters in all (a bigint's text), and its last page number. */
export interface DocumentSize {
  readonly pages: number
  readonly chars: number
  readonly last: number | null
}

/**
 * The text length of every page of each of the documents, in page order, in one aggregated query (what the
 * launch preview estimates model requests from). Documents without pages are absent.
 */
export const pageTextLengthsOfDocuments = (
  db: Conn,
  documentIds: ReadonlyArray<string>,
): Effect.Effect<ReadonlyMap<string, ReadonlyArray<number>>> =>
  documentIds.length === 0
    ? Effect.succeed(new Map())
    : Effect.promise(() =>
        db
          .selectFrom("pages")
          .select(["document_id", sql<Array<number>>`array_agg(length(text) order by number)`.as("lengths")])
          .where("document_id", "in", documentIds)
          .groupBy("document_id")
          .execute(),
      ).pipe(Effect.map((rows) => new Map(rows.map((r) => [r.document_id, r.lengths.map(Number)]))))

/** A page's blocks as the model prompt needs them: only a page with tables needs the blocks placing them. */
const promptBlocks = sql<PageRow["blocks"]>`case when tables = '[]'::jsonb then '[]'::jsonb else blocks end`

export type PromptPage = Pick<PageRow, "number" | "text" | "tables" | "blocks">

/** A document's size and, when it is small enough, its pages (see `pagesWithin`). */
export interface PagesWithin {
  readonly size: DocumentSize
  readonly pages: ReadonlyArray<PromptPage> | undefined
}

/** The row `pagesWithinQuery` answers. */
export interface PagesWithinRow {
  readonly pages: number
  readonly chars: number
  readonly last: number | null
  readonly texts: Array<PromptPage> | null
}

/** `pagesWithin`'s query, as a subquery for a statement that reads more beside it. */
export const pagesWithinQuery = (documentId: string, maxChars: number) => sql<PagesWithinRow>`
  select t.pages, t.chars, t.last,
         case when t.chars <= ${Math.floor(maxChars)} then (
           select coalesce(jsonb_agg(jsonb_build_object('number', number, 'text', text, 'tables', tables,
                                                        'blocks', ${promptBlocks}) order by number), '[]'::jsonb)
           from pages where document_id = ${documentId}::uuid
         ) end as texts
  from (select count(*)::int as pages, coalesce(sum(length(text)), 0)::bigint as chars, max(number) as last
        from pages where document_id = ${documentId}::uuid) t`

export const pagesWithinOf = (row: PagesWithinRow): PagesWithin => ({
  size: { pages: row.pages, chars: row.chars, last: row.last },
  pages: row.texts ?? undefined,
})

/**
 * The document's size and, when its pages hold at most `maxChars` characters in
 * all, every page (as `pageTexts` reads it), in one statement: a document small enough to go to the model
 * whole is read in one round trip; a larger one answers its size alone.
 */
export const pagesWithin = (db: Conn, documentId: string, maxChars: number): Effect.Effect<PagesWithin> =>
  Effect.promise(async () =>
    pagesWithinOf((await pagesWithinQuery(documentId, maxChars).execute(db)).rows[0]!),
  )

/**
 * The text of the document's pages (all, or those numbered `numbers`), in page order, with their tables,
 * and the blocks that place them (only for pages that have tables: what the model prompt needs).
 */
export const pageTexts = (
  db: Conn,
  documentId: string,
  numbers?: ReadonlyArray<number>,
): Effect.Effect<ReadonlyArray<PromptPage>> =>
  Effect.promise(() => {
    let q = db
      .selectFrom("pages")
      .select(["number", "text", "tables", promptBlocks.as("blocks")])
      .where("document_id", "=", documentId)
    if (numbers !== undefined) q = q.where("number", "in", numbers)
    return q.orderBy("number").execute()
  })

/** The numbers of the document's pages that match the `to_tsquery` text `query`, best first, at most `limit`. */
export const rankedPageNumbers = (
  db: Conn,
  documentId: string,
  query: string,
  limit: number,
): Effect.Effect<ReadonlyArray<number>> =>
  Effect.promise(async () => {
    const r = await sql<{ number: number }>`
      select p.number
      from pages p, to_tsquery('english', ${query}) q
      where p.document_id = ${documentId} and p.tsv @@ q
      order by ts_rank_cd(p.tsv, q) desc, p.number
      limit ${limit}
    `.execute(db)
    return r.rows.map((p) => p.number)
  })

/** The numbers of the document's first `limit` pages apart from `except`. */
export const leadingPageNumbers = (
  db: Conn,
  documentId: string,
  except: ReadonlyArray<number>,
  limit: number,
): Effect.Effect<ReadonlyArray<number>> =>
  Effect.promise(async () => {
    const rows = await db
      .selectFrom("pages")
      .select("number")
      .where("document_id", "=", documentId)
      .where("number", "not in", except.length > 0 ? except : [0])
      .orderBy("number")
      .limit(limit)
      .execute()
    return rows.map((p) => p.number)
  })
