import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // The first successful answer to an upload or an /extract/ call per organisation, operation and
  // Idempotency-Key, returned again to a retry for 24 hours. `fingerprint` tells a retry from another
  // request that reuses the key. The row is written in the transaction that creates the documents.
  await db.schema
    .createTable("idempotency_keys")
    .addColumn("organization_id", "uuid", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("operation", "text", (c) => c.notNull())
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("fingerprint", "text", (c) => c.notNull())
    .addColumn("status", "integer", (c) => c.notNull())
    .addColumn("body", "jsonb")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("idempotency_keys_pkey", ["organization_id", "operation", "key"])
    .execute()
  await db.schema
    .createIndex("idempotency_keys_created")
    .on("idempotency_keys")
    .column("created_at")
    .execute()

  // The sweep of orphan files asks which stored keys documents refer to: by the key itself, or by the
  // folder of a document version's key (files stored beside the original, such as page images).
  await db.schema.createIndex("documents_blob_key").on("documents").column("blob_key").execute()
  await sql`create index documents_blob_folder on documents ((regexp_replace(blob_key, '/?[^/]*$', '')))`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("documents_blob_folder").ifExists().execute()
  await db.schema.dropIndex("documents_blob_key").ifExists().execute()
  await db.schema.dropTable("idempotency_keys").ifExists().execute()
}
