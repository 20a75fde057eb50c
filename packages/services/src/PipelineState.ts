/** The agents' pipeline states, for the use-cases that show them (agents, results, status). */
export {
  type AgentProgress,
  type AgentState,
  type ConsistencyCounts,
  deriveAgentStates,
  loadAgentStates,
} from "@dxs/pipeline/run/AgentStates"
