/**
 * Draft agents. A derived agent whose `derived_prompt` is empty or whitespace-only is a draft: it has
 * nothing to run yet. Drafts are excluded from the project's `agent_count` and are never planned by a
 * launch (see LaunchPlanner.ts). An extraction agent is never a draft: its `name` is required and is
 * enough to extract with.
 */
import type { AgentType } from "./Enums.ts"

export interface DraftCandidate {
  readonly agent_type: AgentType
  readonly derived_prompt?: string | null | undefined
}

/** True for a derived agent with an empty (whitespace-only) `derived_prompt`. */
export const isDraftAgent = (agent: DraftCandidate): boolean =>
  agent.agent_type === "derived" && (agent.derived_prompt ?? "").trim() === ""
