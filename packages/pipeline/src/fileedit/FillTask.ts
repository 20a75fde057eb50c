/**
 * The `file-edit` task: reads the job's template from the blob store, fills it from the project's current
 * results, stores the filled file and marks the job succeeded with its problems, in one transaction with
 * the task's completion. A cancelled job (its row gone) stops at the next progress update and keeps no
 * output; on the last attempt an error fails the job with it.
 */

import { type BlobStoreShape, type Database, type TaskRow, transactionOn, undoUnlessCommitted } from "@dxs/db"
import { logLine } from "@dxs/db/Log"
import { outageOf } from "@dxs/db/Outage"
import * as FileEdits from "@dxs/db/repositories/FileEdits"
import { type ResultIndex, resultIndex, type TemplateAgent, type TemplateResult } from "@dxs/domain/FileEdit"
import { Data, Effect } from "effect"
import type { Kysely, Transaction } from "kysely"
import { fillDocx } from "./Docx.ts"
import type { Progress } from "./Fill.ts"
import { fillXlsx } from "./Xlsx.ts"

/** What the handler gets besides its task (a structural subset of the worker's TaskContext). */
export interface FileEditTaskContext {
  readonly workerId: string
  readonly db: Kysely<Database>
  readonly complete: (trx: Transaction<Database>) => Promise<void>
}

/** Where a job's files live in the blob store (outside the documents' folders, so never an orphan there). */
export const fileEditBlobKey = (
  projectId: string,
  jobId: string,
  what: "template" | "filled",
  format: string,
) => `file-edit/${projectId}/${jobId}/${what}.${format}`

/** The job was cancelled or replaced meanwhile: stop, keep nothing. */
export class JobGone extends Data.TaggedError("JobGone")<{ readonly jobId: string }> {
  override get message() {
    return `file-edit job ${this.jobId} was cancelled`
  }
}

/** The index templates are filled from, over the project's published agents and current results. */
export const loadResultIndex = (db: Kysely<Database>, projectId: string): Effect.Effect<ResultIndex> =>
  Effect.map(FileEdits.templateSources(db, projectId), ({ agents, attachments, dimensions, results }) => {
    const dimensionsOf = new Map<string, Array<string>>()
    for (const a of attachments) {
      const list = dimensionsOf.get(a.agent_id)
      if (list) list.push(a.name)
      else dimensionsOf.set(a.agent_id, [a.name])
    }
    const names = new Map(dimensions.map((d) => [d.id, d.name]))
    const agentById = new Map(agents.map((a) => [a.id, a.name]))
    const templateAgents: Array<TemplateAgent> = agents.map((a) => ({
      name: a.name,
      valueType: a.value_type,
      valueIfNotFound: a.value_if_not_found,
      dimensions: dimensionsOf.get(a.id) ?? [],
    }))
    const templateResults: Array<TemplateResult> = results.flatMap((r) => {
      const agent = agentById.get(r.agent_id)
      if (agent === undefined) return []
      const values: Record<string, string> = {}
      for (const d of r.dimension_values ?? [])
        values[names.get(d.dimension_id) ?? d.name] = d.dimension_value
      return [{ agent, dimensionValues: values, value: r.value, status: r.resolution_status }]
    })
    return resultIndex(
      templateAgents,
      templateResults,
      dimensions.map((d) => d.name),
    )
  })

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e)) || "error"

/**
 * Fills the job's template and commits the filled file with the job's success and the task's completion.
 * A job cancelled meanwhile (its row no longer running) fails with `JobGone`; the filled file is stored
 * only as part of the commit (removed again when the commit does not happen).
 */
const fillJob = (
  blobs: BlobStoreShape,
  job: FileEdits.FileEditJobRow,
  outputKey: string,
  ctx: FileEditTaskContext,
) =>
  Effect.gen(function* () {
    const template = yield* blobs.read(job.template_key)
    const index = yield* loadResultIndex(ctx.db, job.project_id)
    const progress: Progress<JobGone> = (completed, total) =>
      Effect.flatMap(FileEdits.setProgress(ctx.db, job.id, completed, total), (running) =>
        running ? Effect.void : new JobGone({ jobId: job.id }),
      )
    const filled =
      job.format === "xlsx"
        ? yield* fillXlsx(template, index, progress)
        : yield* fillDocx(template, index, progress)
    yield* undoUnlessCommitted(
      Effect.zipRight(
        blobs.put(outputKey, filled.bytes),
        transactionOn(ctx.db, (trx) =>
          Effect.gen(function* () {
            if (!(yield* FileEdits.finishJob(trx, job.id, { outputKey, problems: filled.problems })))
              return yield* new JobGone({ jobId: job.id })
            yield* Effect.promise(() => ctx.complete(trx))
          }),
        ),
      ),
      blobs.remove(outputKey),
    )
    yield* logLine("info", "template filled", {
      project_id: job.project_id,
      job_id: job.id,
      format: job.format,
      problems: filled.problems.length,
    })
  })

/**
 * The `file-edit` task handler. A cancelled job's task went with it: there is nothing to complete. A
 * refused template, or any other failure on the last attempt (an outage apart: storage or the database out
 * of reach is retried for the retry window), fails the job with its reason and completes the task; other
 * failures fail the attempt (retried). An interruption (lease lost, worker stopping) keeps nothing.
 */
export const fileEditTaskHandler =
  (blobs: BlobStoreShape) =>
  (task: TaskRow, ctx: FileEditTaskContext): Effect.Effect<void> =>
    Effect.gen(function* () {
      const job = yield* FileEdits.runningJob(ctx.db, String(task.payload.job_id ?? ""))
      // Cancelled or replaced before it started: nothing to do.
      if (job === undefined) return
      const outputKey = fileEditBlobKey(job.project_id, job.id, "filled", job.format)
      const failJob = (reason: string) =>
        transactionOn(ctx.db, (trx) =>
          Effect.zipRight(
            FileEdits.failJob(trx, job.id, reason),
            Effect.promise(() => ctx.complete(trx)),
          ),
        )
      yield* fillJob(blobs, job, outputKey, ctx).pipe(
        Effect.catchTags({
          JobGone: () => blobs.remove(outputKey),
          FillRefused: (refused) => failJob(refused.message),
          // Gone from storage: no later attempt would find it.
          BlobNotFound: () => failJob("the template's stored file is missing"),
        }),
        Effect.catchAllDefect((e) =>
          task.attempts >= task.max_attempts && outageOf(e) === undefined
            ? failJob(`filling failed: ${messageOf(e)}`)
            : Effect.die(e),
        ),
        Effect.asVoid,
      )
    })
