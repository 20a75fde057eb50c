import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  await organizations(db)
  await projectsAndDocuments(db)
  await agentsAndDimensions(db)
  await tasks(db)
}

/** Organisations with their API keys, and the server's secrets. */
async function organizations(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("organizations")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("name", "text", (c) => c.notNull().unique())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute()

  await db.schema
    .createTable("api_keys")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("organization_id", "uuid", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("name", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("key_prefix", "text", (c) => c.notNull())
    .addColumn("key_hash", "text", (c) => c.notNull().unique())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("last_used_at", "timestamptz")
    .addColumn("revoked_at", "timestamptz")
    .execute()

  await db.schema
    .createTable("server_secrets")
    .addColumn("name", "text", (c) => c.primaryKey())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute()
}

/** Folders, projects, and the documents of a project with their tags. */
async function projectsAndDocuments(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("folders")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("organization_id", "uuid", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("parent_id", "uuid", (c) => c.references("folders.id").onDelete("cascade"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute()

  await db.schema
    .createTable("projects")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("organization_id", "uuid", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("reference_date", "date")
    .addColumn("auto_archive_after_days", "integer")
    .addColumn("auto_attach_document_dimension", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("is_pinned", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("folder_id", "uuid", (c) => c.references("folders.id").onDelete("set null"))
    .addColumn("project_modules", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("target_output_schema", "jsonb")
    .addColumn("output_mapping_status", "text", (c) => c.notNull().defaultTo("pending"))
    .addColumn("last_visited_at", "timestamptz")
    .addColumn("archived_at", "timestamptz")
    .addColumn("archive_of_project_id", "uuid", (c) => c.references("projects.id").onDelete("cascade"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute()
  await db.schema
    .createIndex("projects_org_name")
    .on("projects")
    .columns(["organization_id", "name"])
    .execute()

  await db.schema
    .createTable("documents")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("project_id", "uuid", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("file_name", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().defaultTo("Pending"))
    .addColumn("page_count", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("version", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("summary", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("metadata", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("failure_reason", "text")
    .addColumn("uses_agentic_extraction", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("last_parsed_at", "timestamptz")
    .addColumn("archive_requested_at", "timestamptz")
    .addColumn("blob_key", "text", (c) => c.notNull())
    .addColumn("content_type", "text", (c) => c.notNull())
    .addColumn("size_bytes", "bigint", (c) => c.notNull())
    .addColumn("sha256", "text", (c) => c.notNull())
    .addColumn("parent_document_id", "uuid", (c) => c.references("documents.id").onDelete("set null"))
    .addColumn("uploaded_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute()
  await db.schema
    .createIndex("documents_project")
    .on("documents")
    .columns(["project_id", "uploaded_at"])
    .execute()

  await db.schema
    .createTable("document_tags")
    .addColumn("document_id", "uuid", (c) => c.notNull().references("documents.id").onDelete("cascade"))
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("value", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("document_tags_pk", ["document_id", "key"])
    .execute()
}

/** Dimensions and agents of a project, with the dimensions and agents an agent refers to. */
async function agentsAndDimensions(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("dimensions")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("project_id", "uuid", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("example_values", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("value_type", "text", (c) => c.notNull().defaultTo("string"))
    .addColumn("source", "text", (c) => c.notNull().defaultTo("CUSTOM"))
    .addColumn("tag_key", "text")
    .addColumn("auto_attach_to_new_agents", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .execute()
  await sql`create unique index dimensions_project_name on dimensions (project_id, lower(name))`.execute(db)

  await db.schema
    .createTable("agents")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("project_id", "uuid", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("template_id", "uuid")
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("extraction_instructions", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("value_type", "text", (c) => c.notNull().defaultTo("string"))
    .addColumn("unit", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("examples", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("inconsistency_instructions", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("resolution_instructions", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("enable_complex_calculations_in_resolution", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("enable_web_search", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("value_if_not_found", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("agent_type", "text", (c) => c.notNull().defaultTo("extraction"))
    .addColumn("derived_prompt", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("is_evaluation", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("is_draft", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("extraction_status", "text", (c) => c.notNull().defaultTo("Pending"))
    .addColumn("requires_attention", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("improvement_tip_summary", "text")
    .addColumn("inconsistency_summary", "text")
    .addColumn("config_version", "integer", (c) => c.notNull().defaultTo(1))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute()
  await db.schema.createIndex("agents_project").on("agents").columns(["project_id", "created_at"]).execute()

  await db.schema
    .createTable("agent_dimensions")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("agent_id", "uuid", (c) => c.notNull().references("agents.id").onDelete("cascade"))
    .addColumn("dimension_id", "uuid", (c) => c.notNull().references("dimensions.id").onDelete("cascade"))
    .addColumn("are_values_dynamic", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("values", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("order", "integer", (c) => c.notNull().defaultTo(0))
    .addUniqueConstraint("agent_dimensions_unique", ["agent_id", "dimension_id"])
    .execute()

  await db.schema
    .createTable("agent_references")
    .addColumn("agent_id", "uuid", (c) => c.notNull().references("agents.id").onDelete("cascade"))
    .addColumn("referenced_agent_id", "uuid", (c) => c.notNull().references("agents.id").onDelete("cascade"))
    .addColumn("position", "integer", (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint("agent_references_pk", ["agent_id", "referenced_agent_id"])
    .execute()
}

/** The task queue. */
async function tasks(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("tasks")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("idempotency_key", "text", (c) => c.notNull().unique())
    .addColumn("payload", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("project_id", "uuid", (c) => c.references("projects.id").onDelete("cascade"))
    .addColumn("status", "text", (c) => c.notNull().defaultTo("pending"))
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("max_attempts", "integer", (c) => c.notNull().defaultTo(5))
    .addColumn("lease_expirations", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("run_after", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("locked_by", "text")
    .addColumn("locked_until", "timestamptz")
    .addColumn("last_error", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("completed_at", "timestamptz")
    .execute()
  await sql`create index tasks_claimable on tasks (run_after) where status in ('pending', 'running')`.execute(
    db,
  )
  await db.schema.createIndex("tasks_project").on("tasks").columns(["project_id", "status"]).execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of [
    "tasks",
    "agent_references",
    "agent_dimensions",
    "agents",
    "dimensions",
    "document_tags",
    "documents",
    "projects",
    "folders",
    "server_secrets",
    "api_keys",
    "organizations",
  ]) {
    await db.schema.dropTable(t).ifExists().execute()
  }
}
