/**
 * Launch rule 7: changing any of eight agent fields clears that agent's extractions on save, so the next
 * launch re-extracts that agent against all documents. Supplying a field with its current value changes
 * nothing; other fields (name, value_if_not_found, dimensions, ...) never clear. In dxs "clearing" is done
 * by incrementing the agent's config version: extraction records of an older version no longer count
 * (see LaunchPlanner.ts).
 */
import type { AgentValueType } from "./Enums.ts"

/** The eight fields whose change clears an agent's extractions, in the order of the spec. */
export const extractionClearingFields = [
  "extraction_instructions",
  "value_type",
  "examples",
  "unit",
  "resolution_instructions",
  "inconsistency_instructions",
  "enable_complex_calculations_in_resolution",
  "enable_web_search",
] as const
export type ExtractionClearingField = (typeof extractionClearingFields)[number]

/** The stored values of the eight fields. */
export interface AgentExtractionConfig {
  readonly extraction_instructions: string
  readonly value_type: AgentValueType
  readonly examples: string
  readonly unit: string
  readonly resolution_instructions: string
  readonly inconsistency_instructions: string
  readonly enable_complex_calculations_in_resolution: boolean
  readonly enable_web_search: boolean
}

/** An update body: any subset of fields; `undefined` means "not supplied". */
export type AgentPatch = {
  readonly [K in ExtractionClearingField]?: AgentExtractionConfig[K] | undefined
} & {
  readonly [field: string]: unknown
}

const isSupplied = (patch: AgentPatch, field: ExtractionClearingField): boolean => patch[field] !== undefined

/** The clearing fields the patch supplies with a value different from the stored one, in spec order. */
export const changedClearingFields = (
  before: AgentExtractionConfig,
  patch: AgentPatch,
): ReadonlyArray<ExtractionClearingField> =>
  extractionClearingFields.filter((field) => isSupplied(patch, field) && patch[field] !== before[field])

/** True iff saving the patch clears the agent's extractions (launch rule 7). */
export const clearsExtractions = (before: AgentExtractionConfig, patch: AgentPatch): boolean =>
  changedClearingFields(before, patch).length > 0
