import { type Kysely, sql } from "kysely"

// Frozen: never import application code here.
export async function up(db: Kysely<any>): Promise<void> {
  const now = sql`now()`
  // A tenant's webhook subscription. `headers` holds the custom headers with values encrypted
  // (AES-256-GCM, JSON {name: "v1:<iv>:<tag>:<ciphertext>"}); `secret` the signing secret, encrypted too.
  await db.schema
    .createTable("webhook_subscriptions")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("organization_id", "uuid", (c) =>
      c.notNull().references("organizations.id").onDelete("cascade"),
    )
    .addColumn("name", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("subscribed_events", "jsonb", (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn("is_active", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("headers", "jsonb", (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn("secret", "text", (c) => c.notNull())
    .addColumn("deactivated_reason", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute()
  await sql`create index webhook_subscriptions_org on webhook_subscriptions (organization_id)`.execute(db)

  // One message per event and subscription (its id is the Standard Webhooks `webhook-id`, stable across
  // attempts). Exactly one per pair: the unique constraint makes fan-out idempotent.
  await db.schema
    .createTable("webhook_deliveries")
    .addColumn("id", "uuid", (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn("subscription_id", "uuid", (c) =>
      c.notNull().references("webhook_subscriptions.id").onDelete("cascade"),
    )
    .addColumn("event_id", "uuid", (c) => c.references("events.id").onDelete("cascade"))
    .addColumn("event_type", "text", (c) => c.notNull())
    .addColumn("data", "jsonb", (c) => c.notNull())
    .addColumn("occurred_at", "timestamptz", (c) => c.notNull())
    .addColumn("status", "text", (c) =>
      c.notNull().defaultTo("pending").check(sql`status in ('pending', 'succeeded', 'failed')`),
    )
    .addColumn("attempt_count", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_attempt_at", "timestamptz")
    .addColumn("last_status_code", "integer")
    .addColumn("last_error", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .addColumn("delivered_at", "timestamptz")
    .execute()
  await sql`create unique index webhook_deliveries_once on webhook_deliveries (event_id, subscription_id) where event_id is not null`.execute(
    db,
  )
  await sql`create index webhook_deliveries_subscription on webhook_deliveries (subscription_id, created_at desc)`.execute(
    db,
  )

  // Every attempt of a delivery: its Service-Delivery-Id, the answer or the error.
  await db.schema
    .createTable("webhook_attempts")
    .addColumn("id", "uuid", (c) => c.primaryKey())
    .addColumn("delivery_id", "uuid", (c) =>
      c.notNull().references("webhook_deliveries.id").onDelete("cascade"),
    )
    .addColumn("number", "integer", (c) => c.notNull())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("status_code", "integer")
    .addColumn("error", "text")
    .addColumn("duration_ms", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("response_body", "text")
    .addColumn("attempted_at", "timestamptz", (c) => c.notNull().defaultTo(now))
    .execute()
  await sql`create index webhook_attempts_delivery on webhook_attempts (delivery_id, number)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("webhook_attempts").ifExists().execute()
  await db.schema.dropTable("webhook_deliveries").ifExists().execute()
  await db.schema.dropTable("webhook_subscriptions").ifExists().execute()
}
