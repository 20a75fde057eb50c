/**
 * Launching the pipeline and watching it: `POST …/agents/launch/` and `GET …/agents/status/`.
 */
import { transaction, withDb } from "@dxs/db"
import type { AgentStatus } from "@dxs/domain/contract/Agent"
import { loadAgentStatesOfProjects, runningPipelines } from "@dxs/pipeline/run/AgentStates"
import { requestLaunch } from "@dxs/pipeline/run/Runs"
import { Effect } from "effect"
import { CurrentOrganization } from "./CurrentOrganization.ts"
import { BadRequest, Conflict } from "./Errors.ts"
import type { AgentProgress, ConsistencyCounts } from "./PipelineState.ts"
import { checkLiveProject, oneProject, projectsOfOrganization } from "./Projects.ts"

export type AgentsStatus = AgentStatus

/** Each project's agents/status record; projects not of the current organisation are absent. */
const statusForProjects = (projectIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    const ids = yield* withDb((db) => projectsOfOrganization(db, org.id, projectIds))
    if (ids.length === 0) return new Map<string, AgentsStatus>()
    const [states, running] = yield* withDb((db) =>
      Effect.all([loadAgentStatesOfProjects(db, ids), runningPipelines(db, ids)], {
        concurrency: "unbounded",
      }),
    )
    return new Map(
      ids.map((id) => {
        const progress: Record<string, AgentProgress> = {}
        const consistency: Record<string, ConsistencyCounts> = {}
        for (const [agentId, state] of states.get(id) ?? []) {
          progress[agentId] = state.progress
          consistency[agentId] = state.consistency
        }
        return [id, { progress, consistency, pipeline_running: running.has(id) } satisfies AgentsStatus]
      }),
    )
  })

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
      }),

    /** The agents/status record. Drafts are included (always pending). */
    status: (projectId: string) =>
      Effect.flatMap(statusForProjects([projectId]), (statuses) => oneProject(projectId, statuses)),

    /** For each of the projects that is the organisation's (the others are absent), its `status`. */
    statusForProjects,
  },
}) {}
