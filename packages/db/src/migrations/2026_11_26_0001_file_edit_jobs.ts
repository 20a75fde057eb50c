import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  // A project's file-edit job (a template filled from its results): one per project, replaced by the next.
  await db.schema
    .createTable("file_edit_jobs")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("project_id", "uuid", (c) =>
      c.notNull().unique().references("projects.id").onDelete("cascade"),
    )
    .addColumn("state", "text", (c) => c.notNull().check(sql`state in ('running', 'succeeded', 'failed')`))
    .addColumn("format", "text", (c) => c.notNull().check(sql`format in ('xlsx', 'docx')`))
    .addColumn("template_name", "text", (c) => c.notNull())
    .addColumn("template_key", "text", (c) => c.notNull())
    .addColumn("output_key", "text")
    .addColumn("progress_completed", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("progress_total", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("error", "text")
    .addColumn("problems", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("task_id", "uuid")
    .addColumn("started_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("finished_at", "timestamptz")
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("file_edit_jobs").ifExists().execute()
}
