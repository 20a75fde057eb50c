/**
 * Output mapping: a declarative tree that maps agents (named extractors with string values) and dimensions
 * (named value lists) onto the fields of a project's target JSON Schema. Arrays and dimension-keyed objects
 * iterate a dimension's values; inside them, `scalar_from_agent` leaves take the agent's value for the bound
 * value, and `dimension_value` leaves the bound value itself (which item or key it is). `validateMapping`
 * checks an untrusted mapping against the schema and the project's agents and dimensions;
 * `renderSchema` renders resolved values in the schema's shape so that the answer validates against the
 * schema (or says why it cannot), leaving out every node that has a diagnostic. Pure.
 */

import type { DiagnosticCode, ResolutionStatus } from "./Enums.ts"
import type { PositionCheck } from "./JsonSchema.ts"

export { convertLeaf, leafCandidates, NOT_FOUND_TEXT } from "./OutputMappingCoercion.ts"
export { MISSING_KEY, renderSchema, renderSchemaResult } from "./OutputMappingRendering.ts"
export { hasMappingErrors, mappingErrors, validateMapping } from "./OutputMappingValidation.ts"

export type MappingNode =
  | { readonly kind: "object"; readonly properties: Readonly<Record<string, MappingNode>> }
  | {
      readonly kind: "scalar_from_agent"
      readonly agent_name: string
      readonly dimension_values?: Readonly<Record<string, string>>
    }
  | { readonly kind: "array_from_dimension"; readonly dimension_name: string; readonly items: MappingNode }
  | { readonly kind: "object_from_dimension"; readonly dimension_name: string; readonly values: MappingNode }
  /** The value of a dimension bound by an enclosing array/object_from_dimension (the item's or key's own). */
  | { readonly kind: "dimension_value"; readonly dimension_name: string }

/** The spec's mapping diagnostic codes (`DiagnosticCodes` in Enums.ts). */
export type MappingDiagnosticCode = DiagnosticCode

export interface MappingDiagnostic {
  readonly path: string
  readonly severity: "error" | "warning"
  readonly code: MappingDiagnosticCode
  readonly message: string
}

export interface MappingAgent {
  readonly name: string
  readonly value_type: "string" | "number" | "bool" | "date" | "datetime"
  /** Names of the dimensions attached to the agent. */
  readonly dimensions: ReadonlyArray<string>
  /** What stands for "nothing found" (`n/a` when empty): a required field's value of last resort. */
  readonly value_if_not_found?: string
}

export interface MappingDimension {
  readonly name: string
  /** Current values, in display order. */
  readonly values: ReadonlyArray<string>
}

export interface MappingContext {
  readonly agents: ReadonlyArray<MappingAgent>
  readonly dimensions: ReadonlyArray<MappingDimension>
}

export interface LeafResult {
  /** Null when the resolution is "No result". */
  readonly value: string | null
  readonly status: ResolutionStatus
  /** Deep link, built by the caller. */
  readonly url: string
}

/** The resolved value of an agent for the given values of its attached dimensions, if any. */
export type LeafLookup = (
  agentName: string,
  dimensionValues: Readonly<Record<string, string>>,
) => LeafResult | undefined

export interface RenderOptions {
  readonly enrich: boolean
  /**
   * Checks values against the schema at a position (a JSON Schema validator; `positionCheck`). Without one,
   * only whether a position accepts null is checked, so the answer validates only as far as types and enums go.
   */
  readonly check?: PositionCheck
}

/** A required value the results could not give, and what was done about it. */
export interface MissingValue {
  /** Where: a mapping path (`invoice/total`, `documents/[*]/total_due`; `""` for the root). */
  readonly path: string
  /** The values of the dimensions iterated on the way there (which item or key), by dimension name. */
  readonly dimension_values: Readonly<Record<string, string>>
  /** Why, and what was left out because of it. */
  readonly message: string
}

export interface SchemaRendering {
  /** The answer: a JSON object in the schema's shape, with the enrich annotations when asked for. */
  readonly value: Record<string, unknown>
  /** Whether the answer validates against the schema; when not, `unmet` says why. */
  readonly valid: boolean
  /** The required values that could not be given, in schema order. */
  readonly missing: ReadonlyArray<MissingValue>
  /** Those of `missing` that keep the answer from validating (none when it is valid). */
  readonly unmet: ReadonlyArray<MissingValue>
}
