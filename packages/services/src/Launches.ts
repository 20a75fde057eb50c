/**
 * Launching the pipeline and watching it: `POST …/agents/launch/` and `GET …/agents/status/`.
 */
import { query, transaction, withDb } from "@dxs/db"
import { isPipelineRunning, loadAgentStates } from "@dxs/pipeline/run/AgentStates"
import { requestLaunch } from "@dxs/pipeline/run/Runs"
import { Effect } from "effect"
import { CurrentOrganization } from "./CurrentOrganization.ts"
import { BadRequest, Conflict } from "./Errors.ts"
import type { AgentProgress, ConsistencyCounts } from "./PipelineState.ts"
import { findLiveProject, findProject } from "./Projects.ts"

export interface AgentsStatus {
  readonly progress: Readonly<Record<string, AgentProgress>>
  readonly consistency: Readonly<Record<string, ConsistencyCounts>>
  readonly pipeline_running: boolean
}

export class Launches extends Effect.Service<Launches>()("@dxs/services/Launches", {
  accessors: true,
  succeed: {
    /**
     * Launch rules 1–8: 409 listing the failed documents; otherwise a run is queued (or the launch joins
     * the queued one) and starts when nothing else runs and parsing is done.
     */
    launch: (projectId: string) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        const outcome = yield* transaction((trx) =>
          Effect.gen(function* () {
            yield* findLiveProject(trx, org.id, projectId)
            return yield* Effect.promise(() => requestLaunch(trx, projectId))
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
      }),

    /** The agents/status record. Drafts are included (always pending). */
    status: (projectId: string) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        yield* withDb((db) => findProject(db, org.id, projectId))
        const [states, running] = yield* query((db) =>
          Promise.all([loadAgentStates(db, projectId), isPipelineRunning(db, projectId)]),
        )
        const progress: Record<string, AgentProgress> = {}
        const consistency: Record<string, ConsistencyCounts> = {}
        for (const [id, state] of states) {
          progress[id] = state.progress
          consistency[id] = state.consistency
        }
        return { progress, consistency, pipeline_running: running } satisfies AgentsStatus
      }),
  },
}) {}
