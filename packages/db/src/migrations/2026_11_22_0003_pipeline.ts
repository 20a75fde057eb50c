import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  await runs(db)
  await values(db)
  await outboxAndCache(db)
}

const now = sql`now()`

/** Pipeline runs, and the tasks of a run. */
async function runs(db: Kysely<any>): Promise<void> {
  // A launched pipeline run. At most one running and one queued run per project (partial unique indexes).
  await db.schema
    .createTable("runs")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("project_id", "uuid", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("run_number", "integer", (c) => c.notNull())
    .addColumn("status", "text", (c) =>
      c.notNull().check(sql`status in ('queued', 'running', 'succeeded', 'failed')`),
    )
    .addColumn("phase", "text")
    .addColumn("plan", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("failure_reason", "text")
    .addColumn("error", "text")
    .addColumn("model_calls", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("cache_hits", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("prompt_tokens", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("completion_tokens", "bigint", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addColumn("started_at", "timestamptz")
    .addColumn("finished_at", "timestamptz")
    .addUniqueConstraint("runs_project_number", ["project_id", "run_number"])
    .execute()
  await sql`create unique index runs_one_running on runs (project_id) where status = 'running'`.execute(db)
  await sql`create unique index runs_one_queued on runs (project_id) where status = 'queued'`.execute(db)

  await db.schema
    .alterTable("tasks")
    .addColumn("run_id", "uuid", (c) => c.references("runs.id").onDelete("cascade"))
    // Language-model usage of a pipeline task ({calls, cacheHits, promptTokens, completionTokens}), summed
    // into its run when the run ends (kept off the run's row so tasks do not contend for it).
    .addColumn("usage", "jsonb")
    .execute()
  await sql`create index tasks_run on tasks (run_id, status) where run_id is not null`.execute(db)
  // A project's unfinished tasks (parsing in flight, a run's progress).
  await sql`create index tasks_project_active on tasks (project_id, kind) where status in ('pending', 'running')`.execute(
    db,
  )
}

/** What the pipeline finds: dimension instances, atomic values, extractions and resolved results. */
async function values(db: Kysely<any>): Promise<void> {
  // One id per value of a dimension (the `Document` dimension: per document).
  await db.schema
    .createTable("dimension_instances")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("dimension_id", "uuid", (c) => c.notNull().references("dimensions.id").onDelete("cascade"))
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("document_id", "uuid", (c) => c.references("documents.id").onDelete("cascade"))
    .execute()
  // Two documents may share a file name: an instance of the Document dimension is per document.
  await sql`create unique index dimension_instances_value on dimension_instances (dimension_id, value, document_id) nulls not distinct`.execute(
    db,
  )

  // One per combination of an agent and its dimension values (`dimension_key`: canonical JSON of instance ids).
  await db.schema
    .createTable("atomic_values")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("project_id", "uuid", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("agent_id", "uuid", (c) => c.notNull().references("agents.id").onDelete("cascade"))
    .addColumn("dimension_key", "text", (c) => c.notNull())
    .addColumn("dimension_values", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addUniqueConstraint("atomic_values_key", ["agent_id", "dimension_key"])
    .execute()

  // The latest extraction of each agent/document pair (also when it found nothing): the planner's record.
  await db.schema
    .createTable("extraction_pairs")
    .addColumn("agent_id", "uuid", (c) => c.notNull().references("agents.id").onDelete("cascade"))
    .addColumn("document_id", "uuid", (c) => c.notNull().references("documents.id").onDelete("cascade"))
    .addColumn("agent_config_version", "integer", (c) => c.notNull())
    .addColumn("document_version", "integer", (c) => c.notNull())
    .addColumn("dimensions_key", "text", (c) => c.notNull())
    .addColumn("value_count", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("extracted_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addPrimaryKeyConstraint("extraction_pairs_pk", ["agent_id", "document_id"])
    .execute()

  await db.schema
    .createTable("extractions")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("project_id", "uuid", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("agent_id", "uuid", (c) => c.notNull().references("agents.id").onDelete("cascade"))
    .addColumn("agent_config_version", "integer", (c) => c.notNull())
    .addColumn("atomic_value_id", "uuid", (c) =>
      c.notNull().references("atomic_values.id").onDelete("cascade"),
    )
    .addColumn("document_id", "uuid", (c) => c.references("documents.id").onDelete("cascade"))
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("relevant_passage", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("reasoning", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("page_number", "integer")
    .addColumn("consistent", "boolean")
    .addColumn("justification_for_consistency", "text")
    .addColumn("source_type", "text", (c) =>
      c.notNull().check(sql`source_type in ('document', 'web', 'derived')`),
    )
    .addColumn("web_search_query", "text")
    .addColumn("web_search_timestamp", "timestamptz")
    .addColumn("web_citations", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("derived_sources", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("extracted_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute()
  await sql`create index extractions_atomic on extractions (atomic_value_id)`.execute(db)
  await sql`create index extractions_pair on extractions (agent_id, document_id)`.execute(db)

  await db.schema
    .createTable("resolution_results")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("project_id", "uuid", (c) => c.notNull().references("projects.id").onDelete("cascade"))
    .addColumn("agent_id", "uuid", (c) => c.notNull().references("agents.id").onDelete("cascade"))
    .addColumn("agent_config_version", "integer", (c) => c.notNull())
    .addColumn("atomic_value_id", "uuid", (c) =>
      c.notNull().unique().references("atomic_values.id").onDelete("cascade"),
    )
    .addColumn("result_name", "text", (c) => c.notNull())
    .addColumn("value", "jsonb")
    .addColumn("resolution_status", "text", (c) => c.notNull())
    .addColumn("justification", "text")
    .addColumn("references", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("sources", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("source_type", "text", (c) => c.notNull().defaultTo("document"))
    .addColumn("is_web_supplement", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("web_supplement", "jsonb")
    .addColumn("is_overridden", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("updated_by_email", "text")
    .addColumn("latest_review_status", "text")
    .addColumn("latest_review_comment", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("latest_review_at", "timestamptz")
    .addColumn("latest_review_by", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute()
  await sql`create index resolution_results_agent on resolution_results (project_id, agent_id)`.execute(db)

  // The resolution stage's record per agent: complete at this config version.
  await db.schema
    .createTable("agent_resolutions")
    .addColumn("agent_id", "uuid", (c) => c.primaryKey().references("agents.id").onDelete("cascade"))
    .addColumn("agent_config_version", "integer", (c) => c.notNull())
    .addColumn("complete", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("resolved_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute()
}

/** The event outbox and the language-model cache. */
async function outboxAndCache(db: Kysely<any>): Promise<void> {
  // The event outbox: written in the transaction that ends a run; webhook delivery reads it.
  await db.schema
    .createTable("events")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("seq", "bigint", (c) => c.generatedAlwaysAsIdentity())
    .addColumn("organization_id", "uuid", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("project_id", "uuid", (c) => c.references("projects.id").onDelete("set null"))
    .addColumn("run_id", "uuid", (c) => c.references("runs.id").onDelete("set null"))
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("data", "jsonb", (c) => c.notNull())
    .addColumn("occurred_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute()
  await sql`create unique index events_run_once on events (run_id) where run_id is not null`.execute(db)

  // Language-model responses by request hash, so an identical request is answered without a call.
  await db.schema
    .createTable("llm_cache")
    .addColumn("key", "text", (c) => c.primaryKey())
    .addColumn("model", "text", (c) => c.notNull())
    .addColumn("response", "jsonb", (c) => c.notNull())
    .addColumn("prompt_tokens", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("completion_tokens", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    "llm_cache",
    "events",
    "agent_resolutions",
    "resolution_results",
    "extractions",
    "extraction_pairs",
    "atomic_values",
    "dimension_instances",
  ]) {
    await db.schema.dropTable(table).ifExists().execute()
  }
  await db.schema.alterTable("tasks").dropColumn("run_id").execute()
  await db.schema.dropTable("runs").ifExists().execute()
}
