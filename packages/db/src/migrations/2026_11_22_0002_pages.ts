import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // One row per parsed page (1-based). `tsv` is the page text for full-text retrieval, kept by Postgres.
  // Only the first 100,000 characters are indexed: a tsvector holds at most 1 MB, and a page of distinct
  // words (a big spreadsheet sheet) would otherwise make its insert fail.
  await db.schema
    .createTable("pages")
    .addColumn("document_id", "uuid", (c) => c.notNull().references("documents.id").onDelete("cascade"))
    .addColumn("number", "integer", (c) => c.notNull().check(sql`number >= 1`))
    .addColumn("text", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("layout", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("width", "double precision")
    .addColumn("height", "double precision")
    .addColumn("unit", "text")
    .addColumn("tsv", sql`tsvector`, (c) =>
      c.generatedAlwaysAs(sql`to_tsvector('english', left(text, 100000))`).stored(),
    )
    .addPrimaryKeyConstraint("pages_pk", ["document_id", "number"])
    .execute()
  await sql`create index pages_tsv on pages using gin (tsv)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("pages").ifExists().execute()
}
