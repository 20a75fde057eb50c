/** Tables beside the documents: webhooks, members and sessions, rate counters, idempotency keys, file-edit jobs. */
import type { ColumnType, Generated } from "kysely"

type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
type Json<T> = ColumnType<T, string | T | undefined, string | T>

export interface WebhookSubscriptionsTable {
  id: Generated<string>
  organization_id: string
  name: Generated<string>
  url: string
  subscribed_events: Json<ReadonlyArray<string>>
  is_active: Generated<boolean>
  /** Header name → encrypted value. */
  headers: Json<Readonly<Record<string, string>>>
  /** The signing secret (`whsec_…`), encrypted. */
  secret: string
  deactivated_reason: string | null
  created_at: Generated<Date>
  updated_at: Generated<Date>
}

export interface WebhookDeliveriesTable {
  /** The Standard Webhooks `webhook-id`: stable across attempts. */
  id: Generated<string>
  subscription_id: string
  /** Null for a test ping. */
  event_id: string | null
  event_type: string
  data: Json<Record<string, unknown>>
  occurred_at: ColumnType<Date, Date | string, Date | string>
  status: Generated<"pending" | "succeeded" | "failed">
  attempt_count: Generated<number>
  next_attempt_at: NullableTimestamp
  last_status_code: number | null
  last_error: string | null
  created_at: Generated<Date>
  delivered_at: NullableTimestamp
}

export interface WebhookAttemptsTable {
  /** The attempt's `Service-Delivery-Id` (and the envelope's `id`). */
  id: string
  delivery_id: string
  number: number
  url: string
  status_code: number | null
  error: string | null
  duration_ms: Generated<number>
  response_body: string | null
  attempted_at: Generated<Date>
}

export interface MembersTable {
  id: Generated<string>
  organization_id: string
  email: string
  /** `scrypt$N$r$p$salt$hash` (base64 salt and hash). */
  password_hash: string
  created_at: Generated<Date>
  disabled_at: NullableTimestamp
}

export interface SessionsTable {
  id: Generated<string>
  /** SHA-256 (hex) of the cookie's token; the token itself is never stored. */
  token_hash: string
  member_id: string
  csrf_token: string
  created_at: Generated<Date>
  expires_at: Date
  last_seen_at: Generated<Date>
}

export interface RateCountersTable {
  /** `key:<hash prefix>` or `member:<id>`. */
  subject: string
  window_start: Date
  count: number
}

export interface IdempotencyKeysTable {
  organization_id: string
  /** `document-upload` or `extract`. */
  operation: string
  key: string
  /** SHA-256 of what identifies the request (target, file digests, fields). */
  fingerprint: string
  status: number
  body: Json<unknown | null>
  created_at: Generated<Date>
}

/** A project's file-edit job: a template filled from its results (one per project). */
export interface FileEditJobsTable {
  id: Generated<string>
  project_id: string
  state: "running" | "succeeded" | "failed"
  format: "xlsx" | "docx"
  template_name: string
  template_key: string
  /** The filled file, once the job succeeded. */
  output_key: string | null
  progress_completed: Generated<number>
  progress_total: Generated<number>
  error: string | null
  problems: Json<
    ReadonlyArray<{ readonly placeholder: string; readonly location: string; readonly message: string }>
  >
  /** The task that fills it. */
  task_id: string | null
  started_at: Generated<Date>
  finished_at: NullableTimestamp
}
