import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // A page's tables (cells with their spans, header flags and boxes) and its blocks in reading order
  // (headings, paragraphs, list items, tables, figures, captions, running headers and footers). Pages parsed
  // before have none: their blocks are then read from their text.
  await db.schema
    .alterTable("pages")
    .addColumn("tables", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("blocks", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("pages").dropColumn("blocks").dropColumn("tables").execute()
}
