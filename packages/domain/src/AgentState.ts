/**
 * Agent `extraction_status` follows from the pipeline state; no operation sets it directly (spec, "States
 * and transitions"):
 * - `Pending` while extractions are missing or in flight (or resolutions are missing),
 * - `Processed` once all expected resolutions are present and at least one value was resolved,
 * - `No Result` when the agent completed but produced no resolved values.
 */
import type { ExtractionStatus } from "./Enums.ts"

export interface AgentProgressCounts {
  /** Extraction pairs (agent/document at current versions) not yet extracted. */
  readonly missingExtractions: number
  /** Tasks of this agent queued or running (parse, extract, resolve, derive, web search). */
  readonly inFlight: number
  /** Resolutions (atomic values) the agent should have. */
  readonly expectedResolutions: number
  /** Resolutions the agent has. */
  readonly presentResolutions: number
  /** Present resolutions holding a value (not `No result`). */
  readonly resolvedValues: number
}

const hasOutstandingWork = (counts: AgentProgressCounts): boolean =>
  counts.missingExtractions > 0 ||
  counts.inFlight > 0 ||
  counts.presentResolutions < counts.expectedResolutions

/** The agent's `extraction_status` from its progress counts. */
export const deriveExtractionStatus = (counts: AgentProgressCounts): ExtractionStatus => {
  if (hasOutstandingWork(counts)) return "Pending"
  return counts.resolvedValues > 0 ? "Processed" : "No Result"
}

/** True when the status is terminal for a run (`Processed` or `No Result`). */
export const isTerminalExtractionStatus = (status: ExtractionStatus): boolean => status !== "Pending"
