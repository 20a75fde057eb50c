import type { Kysely } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // A message's attachments (the documents panel lists them, and counts them for each page of documents).
  await db.schema
    .createIndex("documents_parent")
    .on("documents")
    .column("parent_document_id")
    .where("parent_document_id", "is not", null)
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("documents_parent").ifExists().execute()
}
