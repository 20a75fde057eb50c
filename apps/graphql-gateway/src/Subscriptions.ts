/**
 * Live run progress as a GraphQL subscription, delivered over Server-Sent Events (graphql-yoga's GraphQL
 * over SSE: `POST /graphql` with `Accept: text/event-stream`). The states come from the services'
 * progress feed (driven by the database's notifications, shared by the subscribers of a project); this
 * only subscribes and translates.
 */
import type { ProjectProgress } from "@dxs/services"
import { ProgressFeed } from "@dxs/services"
import { Effect, Stream } from "effect"
import type { GraphqlContext } from "./Context.ts"

export const subscriptionTypeDefs = /* GraphQL */ `
  type Subscription {
    """
    The project's run progress: the current state first, then every change until the client disconnects.
    Served over Server-Sent Events (POST /graphql with Accept: text/event-stream). An API key or member may
    hold a limited number of these at once (RATE_LIMITED beyond it).
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

const runProgress = (projectId: string, { status, agents }: ProjectProgress) => ({
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
})

export const subscriptionResolvers = {
  Subscription: {
    runProgress: {
      subscribe: (
        _: unknown,
        args: { projectId: string },
        ctx: GraphqlContext & { readonly request?: Request },
      ) =>
        ctx.live(
          Stream.unwrap(Effect.map(ProgressFeed, (feed) => feed.subscribe(args.projectId, ctx.subject))),
          (state) => ({ runProgress: state instanceof Error ? state : runProgress(args.projectId, state) }),
          ctx.request?.signal,
        ),
    },
  },
}
