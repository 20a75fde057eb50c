/**
 * The catalogue of task kinds: each kind's name and the idempotency key of its tasks. A key names the work
 * a task stands for, so enqueuing the same work twice (a retried request, two workers racing) yields one task.
 */

export const PARSE_TASK = "parse"
export const RUN_START_TASK = "run-start"
export const EXTRACT_TASK = "extract"
export const RESOLVE_TASK = "resolve"
export const DERIVE_TASK = "derive"
export const ARCHIVE_TASK = "archive"
export const ARCHIVE_SWEEP_TASK = "archive-sweep"
export const OUTPUT_MAPPING_TASK = "output-mapping"
export const WEBHOOK_FANOUT_TASK = "webhook-fanout"
export const WEBHOOK_DELIVER_TASK = "webhook-deliver"
export const FILE_EDIT_TASK = "file-edit"

/** The phases of a run, in the order their tasks are enqueued. */
export const RUN_PHASE_TASKS = [EXTRACT_TASK, RESOLVE_TASK, DERIVE_TASK] as const
export type RunPhaseTask = (typeof RUN_PHASE_TASKS)[number]

/** A document version's parse; a run that needs the parse itself adds its own id. */
export const parseTaskKey = (documentId: string, version: number, runId?: string): string =>
  runId === undefined
    ? `${PARSE_TASK}:${documentId}:${version}`
    : `${PARSE_TASK}:${documentId}:${version}:${runId}`

export const runStartTaskKey = (runId: string): string => `${RUN_START_TASK}:${runId}`

/** One document version's extraction (all its outstanding agents), within a run. */
export const extractTaskKey = (
  work: { readonly documentId: string; readonly documentVersion: number },
  runId: string,
): string => `${EXTRACT_TASK}:${work.documentId}:${work.documentVersion}:${runId}`

/** One agent's resolution or derivation within a run. */
export const agentTaskKey = (
  kind: typeof RESOLVE_TASK | typeof DERIVE_TASK,
  agentId: string,
  runId: string,
) => `${kind}:${agentId}:${runId}`

export const archiveTaskKey = (documentId: string): string => `${ARCHIVE_TASK}:${documentId}`

/** The daily sweep: one per day (`YYYY-MM-DD`) for all workers. */
export const archiveSweepTaskKey = (day: string): string => `${ARCHIVE_SWEEP_TASK}:${day}`

export const outputMappingTaskKey = (projectId: string, outputSchemaVersion: number): string =>
  `${OUTPUT_MAPPING_TASK}:${projectId}:${outputSchemaVersion}`

export const webhookFanoutTaskKey = (eventId: string): string => `${WEBHOOK_FANOUT_TASK}:${eventId}`

export const webhookDeliverTaskKey = (deliveryId: string): string => `${WEBHOOK_DELIVER_TASK}:${deliveryId}`

/** A file-edit job's filling (a new job has a new id). */
export const fileEditTaskKey = (jobId: string): string => `${FILE_EDIT_TASK}:${jobId}`
