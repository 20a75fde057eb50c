/**
 * Live run progress as a GraphQL subscription, delivered over Server-Sent Events (graphql-yoga's GraphQL
 * over SSE: `POST /graphql` with `Accept: text/event-stream`). The state is read through the same
 * services as the project status and agents/status endpoints and pushed whenever it changes.
 */
import { Launches, Projects } from "@dxs/services"
import { Effect } from "effect"
import type { GraphqlContext } from "./Context.ts"

/** How often a subscription reads the project's state (it pushes only changes). */
export const PROGRESS_POLL_MS = 500

export const subscriptionTypeDefs = /* GraphQL */ `
  type Subscription {
    """
    The project's run progress: the current state first, then every change until the client disconnects.
    Served over Server-Sent Events (POST /graphql with Accept: text/event-stream).
    """
    runProgress(projectId: ID!): RunProgress!
  }

  "A project's pipeline state at one moment."
  type RunProgress {
    project_id: ID!
    "A run is queued or running."
    pipeline_running: Boolean!
    status: ProjectStatus!
    agents: [AgentRunProgress!]!
  }

  "One agent's progress (as in REST GET …/agents/status/)."
  type AgentRunProgress {
    agent_id: ID!
    progress: AgentProgress!
    consistency: JSON!
  }
`

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer)
        resolve()
      },
      { once: true },
    )
  })

const snapshot = (ctx: GraphqlContext, projectId: string) =>
  ctx.run(
    Effect.gen(function* () {
      const status = yield* Effect.flatMap(Projects, (p) => p.status(projectId))
      const agents = yield* Effect.flatMap(Launches, (l) => l.status(projectId))
      return {
        project_id: projectId,
        pipeline_running: status.pipeline_running,
        status,
        agents: Object.keys(agents.progress)
          .sort()
          .map((agent_id) => ({
            agent_id,
            progress: agents.progress[agent_id]!,
            consistency: agents.consistency[agent_id] ?? null,
          })),
      }
    }),
  )

export const subscriptionResolvers = {
  Subscription: {
    runProgress: {
      subscribe: async function* (
        _: unknown,
        args: { projectId: string },
        ctx: GraphqlContext & { readonly request?: Request },
      ) {
        const signal = ctx.request?.signal
        let last = ""
        while (!signal?.aborted) {
          const state = await snapshot(ctx, args.projectId)
          const key = JSON.stringify(state)
          if (key !== last) {
            last = key
            yield { runProgress: state }
          }
          await sleep(PROGRESS_POLL_MS, signal)
        }
      },
    },
  },
}
