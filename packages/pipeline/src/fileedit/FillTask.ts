/**
 * The `file-edit` task: reads the job's template from the blob store, fills it from the project's current
 * results, stores the filled file and marks the job succeeded with its problems, in one transaction with
 * the task's completion. A cancelled job (its row gone) stops at the next progress update and keeps no
 * output; on the last attempt an error fails the job with it.
 */

import type { BlobStoreShape, Database, TaskRow } from "@dxs/db"
import { logEvent } from "@dxs/db/Log"
import { outageOf } from "@dxs/db/Outage"
import * as FileEdits from "@dxs/db/repositories/FileEdits"
import { type ResultIndex, resultIndex, type TemplateAgent, type TemplateResult } from "@dxs/domain/FileEdit"
import { Effect } from "effect"
import type { Kysely, Transaction } from "kysely"
import { fillDocx } from "./Docx.ts"
import { FillRefused, type Progress } from "./Fill.ts"
import { fillXlsx } from "./Xlsx.ts"

/** What the handler gets besides its task (a structural subset of the worker's TaskContext). */
export interface FileEditTaskContext {
  readonly workerId: string
  readonly db: Kysely<Database>
  readonly signal: AbortSignal
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
class JobGone extends Error {
  override readonly name = "JobGone"
}

/** The index templates are filled from, over the project's published agents and current results. */
export const loadResultIndex = (db: Kysely<Database>, projectId: string): Promise<ResultIndex> =>
  Effect.runPromise(FileEdits.templateSources(db, projectId)).then(
    ({ agents, attachments, dimensions, results }) => {
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
    },
  )

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e)) || "error"

export const fileEditTaskHandler =
  (blobs: BlobStoreShape) =>
  async (task: TaskRow, ctx: FileEditTaskContext): Promise<void> => {
    const jobId = String(task.payload.job_id ?? "")
    const job = await Effect.runPromise(FileEdits.runningJob(ctx.db, jobId))
    // Cancelled or replaced before it started: nothing to do.
    if (job === undefined) return
    const outputKey = fileEditBlobKey(job.project_id, job.id, "filled", job.format)
    try {
      const template = await Effect.runPromise(blobs.read(job.template_key))
      const index = await loadResultIndex(ctx.db, job.project_id)
      const progress: Progress = async (completed, total) => {
        if (ctx.signal.aborted) throw new JobGone("the task was abandoned")
        if (!(await Effect.runPromise(FileEdits.setProgress(ctx.db, job.id, completed, total))))
          throw new JobGone("the job was cancelled")
      }
      const filled =
        job.format === "xlsx"
          ? await fillXlsx(template, index, progress)
          : await fillDocx(template, index, progress)
      if (ctx.signal.aborted) throw new JobGone("the task was abandoned")
      await Effect.runPromise(blobs.put(outputKey, filled.bytes))
      try {
        await ctx.db.transaction().execute(async (trx) => {
          if (
            !(await Effect.runPromise(
              FileEdits.finishJob(trx, job.id, { outputKey, problems: filled.problems }),
            ))
          )
            throw new JobGone("the job was cancelled")
          await ctx.complete(trx)
        })
      } catch (e) {
        await Effect.runPromise(blobs.remove(outputKey))
        throw e
      }
      logEvent("info", "template filled", {
        project_id: job.project_id,
        job_id: job.id,
        format: job.format,
        problems: filled.problems.length,
      })
    } catch (e) {
      if (e instanceof JobGone) {
        // A cancelled job's task went with it: there is nothing to complete.
        await Effect.runPromise(blobs.remove(outputKey))
        return
      }
      // An outage (storage, the database) is retried for the retry window without failing the job.
      if (e instanceof FillRefused || (task.attempts >= task.max_attempts && outageOf(e) === undefined)) {
        await ctx.db.transaction().execute(async (trx) => {
          await Effect.runPromise(
            FileEdits.failJob(
              trx,
              job.id,
              e instanceof FillRefused ? e.message : `filling failed: ${messageOf(e)}`,
            ),
          )
          await ctx.complete(trx)
        })
        return
      }
      throw e
    }
  }
