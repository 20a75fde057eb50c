/**
 * Launching the pipeline and watching it: `POST …/agents/launch/`, `GET …/agents/status/`, and beyond the
 * contract what the next launch would cost (`GET …/agents/launch/preview/`) and the project's runs with
 * their model usage (`GET …/runs/`).
 */
import { Db, transaction, withDb } from "@dxs/db"
import { projectAgentStates } from "@dxs/db/repositories/ProjectReads"
import * as RunChanges from "@dxs/db/repositories/RunChanges"
import * as RunsRepository from "@dxs/db/repositories/Runs"
import type { AgentStatus } from "@dxs/domain/contract/Agent"
import type { LaunchPreview, RunChangesPage, RunRecord, RunsPage } from "@dxs/domain/contract/Run"
import { RequestBudget } from "@dxs/pipeline/llm/RequestBudget"
import { deriveAgentStates } from "@dxs/pipeline/run/AgentStates"
import { previewLaunch } from "@dxs/pipeline/run/LaunchPreview"
import { requestLaunch } from "@dxs/pipeline/run/Runs"
import { Context, Effect, Schema } from "effect"
import { CurrentOrganization } from "./CurrentOrganization.ts"
import { BadRequest, Conflict, NotFound } from "./Errors.ts"
import { pageLinks, pageStart } from "./Paging.ts"
import type { AgentProgress, ConsistencyCounts } from "./PipelineState.ts"
import { checkLiveProject, checkProject, oneProject } from "./Projects.ts"
import { checkPage } from "./Results.ts"
import { iso, isoOrNull } from "./Time.ts"

/** The language model provider the workers use (LLM_PROVIDER), as the launch preview reports it. */
export class ModelProvider extends Context.Reference<ModelProvider>()("@dxs/services/ModelProvider", {
  defaultValue: (): { readonly provider: "local" | "openai" } => ({ provider: "local" }),
}) {}

export const RUNS_DEFAULT_LIMIT = 20
export const RUNS_MAX_LIMIT = 100
export const RUN_CHANGES_DEFAULT_LIMIT = 50
export const RUN_CHANGES_MAX_LIMIT = 500

const runRecord = (row: RunsRepository.RunWithUsage): RunRecord => {
  const plan = row.plan as {
    extractPairs?: unknown
    resolve?: unknown
    deriveLevels?: unknown
  }
  const ids = (v: unknown): ReadonlyArray<string> =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []
  const derived = Array.isArray(plan.deriveLevels) ? plan.deriveLevels.flatMap((level) => ids(level)) : []
  return {
    id: row.id,
    number: row.run_number,
    status: row.status,
    failure_reason: row.failure_reason,
    created_at: iso(row.created_at),
    started_at: isoOrNull(row.started_at),
    finished_at: isoOrNull(row.finished_at),
    extraction_pairs: typeof plan.extractPairs === "number" ? plan.extractPairs : 0,
    agents: [...new Set([...ids(plan.resolve), ...derived])],
    usage: {
      requests: row.requests,
      cache_hits: row.cache_hits,
      input_tokens: row.input_tokens,
      cached_input_tokens: row.cached_input_tokens,
      output_tokens: row.output_tokens,
    },
  }
}

export type AgentsStatus = AgentStatus

/** Each project's agents/status record; projects not of the current organisation are absent. */
const statusForProjects = (projectIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    // One statement whatever the number of projects, agents, documents and results.
    const rows = yield* withDb((db) => projectAgentStates(db, org.id, [...new Set(projectIds)]))
    return new Map(
      rows.map((row) => {
        const progress: Record<string, AgentProgress> = {}
        const consistency: Record<string, ConsistencyCounts> = {}
        for (const [agentId, state] of deriveAgentStates(row.states)) {
          progress[agentId] = state.progress
          consistency[agentId] = state.consistency
        }
        return [
          row.id,
          { progress, consistency, pipeline_running: row.pipeline_running } satisfies AgentsStatus,
        ]
      }),
    )
  })

/** The key of a run of the list, as a cursor carries it: its number. */
const RunCursorKey = Schema.Int.pipe(Schema.between(1, 2_147_483_647))

/** A page of the project's runs: by offset, or by a cursor (`next`/`previous`). */
export interface RunsPageQuery {
  readonly limit?: number | undefined
  readonly offset?: number | undefined
  readonly cursor?: string | undefined
}

/** A page of a run's changes, by offset. */
export interface RunChangesPageQuery {
  readonly limit?: number | undefined
  readonly offset?: number | undefined
}

/** A launch requested in one transaction with the project's check; a refused one is a 409 or a 400. */
const launch = (projectId: string) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    const outcome = yield* transaction((trx) =>
      Effect.gen(function* () {
        yield* checkLiveProject(trx, org.id, projectId)
        return yield* requestLaunch(trx, projectId)
      }),
    )
    if (outcome._tag === "Rejected") {
      const error = Conflict.of(
        outcome.message,
        outcome.failedDocuments.map((d) => ({
          path: `documents/${d.id}`,
          message: `${d.name} failed processing`,
        })),
      )
      return yield* Effect.fail(new Conflict({ ...error, failed_documents: outcome.failedDocuments }))
    }
    if (outcome._tag === "CyclicReferences") return yield* Effect.fail(BadRequest.of(outcome.message))
    return { run_id: outcome.runId, run_number: outcome.runNumber, queued_new_run: outcome.created }
  })

/** What the next launch would do, estimated under `budget`, reported with the workers' `provider`. */
const preview = (
  budget: RequestBudget["Type"],
  provider: ModelProvider["Type"]["provider"],
  projectId: string,
) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    yield* withDb((db) => checkProject(db, org.id, projectId))
    const estimate = yield* withDb((db) => previewLaunch(db, projectId, budget))
    return {
      extraction_pairs: estimate.extractionPairs,
      documents: estimate.documents,
      agents: estimate.agents,
      documents_not_parsed: estimate.documentsNotParsed,
      model_requests: estimate.requests.requests,
      estimated_input_tokens: estimate.requests.inputTokens,
      estimated_output_tokens: estimate.requests.outputTokens,
      provider,
      rejected:
        estimate.rejected === undefined
          ? null
          : {
              status: estimate.rejected.status,
              detail: estimate.rejected.detail,
              failed_documents: estimate.rejected.failedDocuments.map(({ id, name }) => ({ id, name })),
            },
    } satisfies LaunchPreview
  })

/** A page of the project's runs, newest first. */
const runs = (projectId: string, page: RunsPageQuery) =>
  Effect.gen(function* () {
    const { limit, offset } = yield* checkPage(page.limit, page.offset, {
      limit: RUNS_DEFAULT_LIMIT,
      max: RUNS_MAX_LIMIT,
    })
    const start = yield* pageStart(RunCursorKey, page)
    const org = yield* CurrentOrganization
    return yield* withDb((db) =>
      Effect.gen(function* () {
        yield* checkProject(db, org.id, projectId)
        const [count, rows] = yield* Effect.all(
          [
            RunsRepository.countRunsOfProject(db, projectId),
            RunsRepository.listRunsOfProject(
              db,
              projectId,
              start === undefined ? { limit, offset } : { limit, after: start.after, before: start.before },
            ),
          ],
          { concurrency: "unbounded" },
        )
        const at =
          start === undefined
            ? offset
            : start.before !== undefined
              ? Math.max(0, start.position - rows.length)
              : start.position
        return {
          count,
          ...pageLinks([], {
            count,
            limit,
            offset: at,
            rows: rows.length,
            first: rows[0]?.run_number,
            last: rows[rows.length - 1]?.run_number,
          }),
          results: rows.map(runRecord),
        } satisfies RunsPage
      }),
    )
  })

const changeRecord = (c: RunChanges.RunChangeRow): RunChangesPage["results"][number] => ({
  agent_id: c.agent_id,
  agent_name: c.agent_name,
  atomic_value_id: c.atomic_value_id,
  result_name: c.result_name,
  dimension_values: Object.fromEntries((c.dimension_values ?? []).map((d) => [d.name, d.dimension_value])),
  resolution_result_id: c.resolution_result_id,
  previous: {
    value: c.previous_value as RunChangesPage["results"][number]["previous"]["value"],
    resolution_status: c.previous_status,
    references: c.previous_references,
    sources: c.previous_sources,
  },
  current: {
    value: c.value as RunChangesPage["results"][number]["current"]["value"],
    resolution_status: c.status,
    references: c.references,
    sources: c.sources,
  },
})

/** A page of what the run numbered `runNumber` changed (NotFound when the project has no such run). */
const changes = (projectId: string, runNumber: number, page: RunChangesPageQuery) =>
  Effect.gen(function* () {
    const { limit, offset } = yield* checkPage(page.limit, page.offset, {
      limit: RUN_CHANGES_DEFAULT_LIMIT,
      max: RUN_CHANGES_MAX_LIMIT,
    })
    const org = yield* CurrentOrganization
    return yield* withDb((db) =>
      Effect.gen(function* () {
        yield* checkProject(db, org.id, projectId)
        const found = yield* RunChanges.findRunByNumber(db, projectId, runNumber)
        if (found === undefined) return yield* NotFound.of("Run", String(runNumber))
        const [count, rows] = yield* Effect.all(
          [
            RunChanges.countRunChanges(db, found.id),
            RunChanges.listRunChanges(db, found.id, { limit, offset }),
          ],
          { concurrency: "unbounded" },
        )
        return {
          run_number: found.run_number,
          previous_run_number: found.previous_run_number,
          count,
          ...pageLinks([], { count, limit, offset, rows: rows.length }),
          results: rows.map(changeRecord),
        } satisfies RunChangesPage
      }),
    )
  })

export class Launches extends Effect.Service<Launches>()("@dxs/services/Launches", {
  accessors: true,
  effect: Effect.gen(function* () {
    const storage = Context.make(Db, yield* Db)
    const provide = Effect.provide(storage)
    const budget = yield* RequestBudget
    const { provider } = yield* ModelProvider
    return {
      /**
       * Launch rules 1–8: 409 listing the failed documents; otherwise a run is queued (or the launch joins
       * the queued one) and starts when nothing else runs and parsing is done.
       */
      launch: (projectId: string) => launch(projectId).pipe(provide),

      /** The agents/status record. Drafts are included (always pending). */
      status: (projectId: string) =>
        Effect.flatMap(statusForProjects([projectId]), (statuses) => oneProject(projectId, statuses)).pipe(
          provide,
        ),

      /** For each of the projects that is the organisation's (the others are absent), its `status`. */
      statusForProjects: (projectIds: ReadonlyArray<string>) => statusForProjects(projectIds).pipe(provide),

      /**
       * What the next launch would do (the launch planner over the project's state) and the model requests
       * an OpenAI-compatible provider would be sent for it, estimated under the request budget. Failed
       * documents do not fail it: `rejected` says the launch would be refused, and why.
       */
      preview: (projectId: string) => preview(budget, provider, projectId).pipe(provide),

      /** The project's runs, newest first, with the model usage their tasks recorded. */
      runs: (projectId: string, page: RunsPageQuery) => runs(projectId, page).pipe(provide),

      /**
       * What a run changed: the values that differ from the values before it, for the same agent and
       * combination of dimension values, each with its citations; by agent (oldest first) and result name.
       */
      changes: (projectId: string, runNumber: number, page: RunChangesPageQuery) =>
        changes(projectId, runNumber, page).pipe(provide),
    }
  }),
}) {}
