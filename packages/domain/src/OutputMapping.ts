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
import {
  additionalPropertiesOf,
  enumOf,
  itemsOf,
  type JsonType,
  nullCheck,
  type PositionCheck,
  propertiesOf,
  requiredOf,
  schemaTypes,
} from "./JsonSchema.ts"
import { parseNumber } from "./Values.ts"

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

const isRecord = (x: unknown): x is Readonly<Record<string, unknown>> =>
  typeof x === "object" && x !== null && !Array.isArray(x)

const KINDS = [
  "object",
  "scalar_from_agent",
  "array_from_dimension",
  "object_from_dimension",
  "dimension_value",
] as const
const SCALAR_TYPES: ReadonlyArray<JsonType> = ["string", "number", "integer", "boolean"]

/** `a/b` with `~` and `/` escaped in the new segment as in JSON Pointer (`[*]`/`{*}` are passed raw). */
const child = (path: string, segment: string): string => (path === "" ? segment : `${path}/${segment}`)
const escapeSegment = (name: string): string => name.replace(/~/g, "~0").replace(/\//g, "~1")
const an = (kind: string): string => `${/^[aeiou]/.test(kind) ? "an" : "a"} ${kind}`
const capital = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1)
const at = (path: string): string => (path === "" ? "the root" : `"${path}"`)

/** Why a mapping node is malformed (a shallow check: children are checked at their own paths). */
const malformation = (node: unknown): string | undefined => {
  if (!isRecord(node)) return 'A mapping node must be a JSON object with a "kind".'
  const kind = node.kind
  if (typeof kind !== "string" || !(KINDS as ReadonlyArray<string>).includes(kind))
    return `${kind === undefined ? 'The mapping node has no "kind"' : `Unknown mapping node kind ${JSON.stringify(kind)}`}; expected one of ${KINDS.join(", ")}.`
  const nonEmpty = (key: string) =>
    typeof node[key] === "string" && node[key] !== ""
      ? undefined
      : `${capital(an(kind))} node needs "${key}", a non-empty string.`
  switch (kind) {
    case "object":
      return isRecord(node.properties)
        ? undefined
        : 'An object node needs "properties", an object mapping field names to mapping nodes.'
    case "scalar_from_agent": {
      const pins = node.dimension_values
      const pinsOk =
        pins === undefined || (isRecord(pins) && Object.values(pins).every((v) => typeof v === "string"))
      return (
        nonEmpty("agent_name") ??
        (pinsOk
          ? undefined
          : 'The "dimension_values" of a scalar_from_agent node must be an object mapping dimension names to values.')
      )
    }
    case "dimension_value":
      return nonEmpty("dimension_name")
    default: {
      const member = kind === "array_from_dimension" ? "items" : "values"
      return (
        nonEmpty("dimension_name") ??
        (node[member] === undefined
          ? `${capital(an(kind))} node needs "${member}", a mapping node.`
          : undefined)
      )
    }
  }
}

const accepts = (types: ReadonlyArray<JsonType>, type: JsonType) => types.length === 0 || types.includes(type)
const describeTypes = (types: ReadonlyArray<JsonType>) => (types.length === 0 ? "any" : types.join(" or "))

const COMPATIBLE: Readonly<Record<MappingAgent["value_type"], ReadonlyArray<JsonType>>> = {
  string: ["string", "boolean"],
  number: ["number", "integer", "string"],
  bool: ["boolean", "string"],
  date: ["string"],
  datetime: ["string"],
}

/** The codes reported as warnings: the mapping can be saved; the affected fields are left out. */
const WARNINGS: ReadonlyArray<MappingDiagnosticCode> = [
  "required_unmapped",
  "dimension_value_unknown",
  "type_incompatible",
]

/** Where a dimension is bound: by which enclosing node kind, at which path. */
type Scope = ReadonlyMap<string, { readonly kind: string; readonly path: string }>

/**
 * Checks an untrusted `mapping` against `schema` and the project's agents and dimensions. Diagnostics come in
 * walk order: depth first, properties in mapping order, then each object's unmapped required fields.
 */
export const validateMapping = (
  schema: unknown,
  mapping: unknown,
  ctx: MappingContext,
): Array<MappingDiagnostic> => {
  const out: Array<MappingDiagnostic> = []
  const report = (path: string, code: MappingDiagnosticCode, message: string) => {
    out.push({ path, severity: WARNINGS.includes(code) ? "warning" : "error", code, message })
  }
  const dimension = (name: string) => ctx.dimensions.find((d) => d.name === name)

  const mismatch = (path: string, types: ReadonlyArray<JsonType>, kind: string, detail = "") =>
    report(
      path,
      "node_kind_mismatch",
      `The schema at ${at(path)} expects ${describeTypes(types)}, which ${an(kind)} node cannot produce${detail}.`,
    )

  /** Checks the dimension of an array/object_from_dimension node; false when the walk cannot descend. */
  const bindable = (path: string, name: string, scope: Scope): boolean => {
    if (dimension(name) === undefined) {
      report(path, "dimension_not_found", `The project has no dimension named "${name}".`)
      return false
    }
    const outer = scope.get(name)
    if (outer !== undefined)
      report(
        path,
        "dimension_not_in_scope",
        `Dimension "${name}" is already bound by the enclosing ${outer.kind} at ${at(outer.path)}; a dimension can be iterated only once along a path.`,
      )
    return true
  }

  const walk = (node: unknown, position: unknown, path: string, scope: Scope): void => {
    const problem = malformation(node)
    if (problem !== undefined) {
      report(path, "node_kind_mismatch", problem)
      return
    }
    const n = node as MappingNode
    const types = schemaTypes(schema, position)
    switch (n.kind) {
      case "object": {
        if (!accepts(types, "object")) {
          mismatch(path, types, n.kind)
          return
        }
        const known = propertiesOf(schema, position)
        for (const [name, sub] of Object.entries(n.properties)) {
          const p = child(path, escapeSegment(name))
          if (Object.hasOwn(known, name)) walk(sub, known[name], p, scope)
          else report(p, "property_not_in_schema", `The schema defines no property "${name}" here.`)
        }
        for (const name of requiredOf(schema, position))
          if (!Object.hasOwn(n.properties, name))
            report(
              child(path, escapeSegment(name)),
              "required_unmapped",
              `Required property "${name}" is not mapped; it will be missing from the results.`,
            )
        return
      }
      case "array_from_dimension":
      case "object_from_dimension": {
        const isArray = n.kind === "array_from_dimension"
        const inner = isArray ? itemsOf(schema, position) : additionalPropertiesOf(schema, position)
        if (!accepts(types, isArray ? "array" : "object")) {
          mismatch(path, types, n.kind)
          return
        }
        if (inner === false) {
          const what = isArray ? "no items" : "no keys besides its properties"
          mismatch(path, types, n.kind, `: the schema allows ${what}`)
          return
        }
        if (!bindable(path, n.dimension_name, scope)) return
        const sub = n.kind === "array_from_dimension" ? n.items : n.values
        const bound = new Map(scope)
        if (!bound.has(n.dimension_name)) bound.set(n.dimension_name, { kind: n.kind, path })
        walk(sub, inner === true ? {} : inner, child(path, isArray ? "[*]" : "{*}"), bound)
        return
      }
      case "scalar_from_agent":
        checkScalar(n, types, path, scope)
        return
      case "dimension_value":
        checkDimensionValue(n, types, path, scope)
    }
  }

  const fitsScalar = (types: ReadonlyArray<JsonType>) =>
    types.length === 0 || types.some((t) => SCALAR_TYPES.includes(t))

  const checkScalar = (
    n: Extract<MappingNode, { kind: "scalar_from_agent" }>,
    types: ReadonlyArray<JsonType>,
    path: string,
    scope: Scope,
  ) => {
    const fits = fitsScalar(types)
    if (!fits) mismatch(path, types, n.kind)
    const matches = ctx.agents.filter((a) => a.name === n.agent_name)
    if (matches.length === 0)
      report(path, "agent_not_found", `The project has no agent named "${n.agent_name}".`)
    if (matches.length > 1)
      report(
        path,
        "agent_ambiguous",
        `${matches.length} agents are named "${n.agent_name}"; rename them so the mapping can tell them apart.`,
      )
    const agent = matches.length === 1 ? matches[0] : undefined
    const pins = n.dimension_values ?? {}
    for (const [name, value] of Object.entries(pins)) {
      const dim = dimension(name)
      const outer = scope.get(name)
      if (dim === undefined)
        report(path, "dimension_not_found", `The project has no dimension named "${name}".`)
      else if (outer !== undefined)
        report(
          path,
          "dimension_not_in_scope",
          `Dimension "${name}" is pinned in dimension_values but already bound by the enclosing ${outer.kind} at ${at(outer.path)}; remove the pin.`,
        )
      else if (agent !== undefined && !agent.dimensions.includes(name))
        report(
          path,
          "dimension_not_on_agent",
          `Agent "${agent.name}" is not split by dimension "${name}"; remove it from dimension_values.`,
        )
      else if (!dim.values.includes(value))
        report(
          path,
          "dimension_value_unknown",
          `Dimension "${name}" has no value "${value}" yet; the field is left out until it appears.`,
        )
    }
    if (agent === undefined) return
    for (const name of agent.dimensions)
      if (!scope.has(name) && !Object.hasOwn(pins, name))
        report(
          path,
          "dimension_not_in_scope",
          `Agent "${agent.name}" is split by dimension "${name}", which no enclosing array_from_dimension or object_from_dimension binds; pin it in dimension_values or map the field inside one.`,
        )
    const scalars = types.filter((t) => SCALAR_TYPES.includes(t))
    if (fits && scalars.length > 0 && !scalars.some((t) => COMPATIBLE[agent.value_type].includes(t)))
      report(
        path,
        "type_incompatible",
        `Agent "${agent.name}" produces ${agent.value_type} values, which cannot be converted to ${describeTypes(scalars)}; the field is left out.`,
      )
  }

  /** A dimension's values are text: they fit strings, and numbers when they parse; never booleans only. */
  const checkDimensionValue = (
    n: Extract<MappingNode, { kind: "dimension_value" }>,
    types: ReadonlyArray<JsonType>,
    path: string,
    scope: Scope,
  ) => {
    const fits = fitsScalar(types)
    if (!fits) mismatch(path, types, n.kind)
    const name = n.dimension_name
    if (dimension(name) === undefined)
      report(path, "dimension_not_found", `The project has no dimension named "${name}".`)
    else if (!scope.has(name))
      report(
        path,
        "dimension_not_in_scope",
        `Dimension "${name}" has a value only inside an array_from_dimension or object_from_dimension over it; map the field inside one.`,
      )
    const scalars = types.filter((t) => SCALAR_TYPES.includes(t))
    if (fits && scalars.length > 0 && scalars.every((t) => t === "boolean"))
      report(
        path,
        "type_incompatible",
        `The values of dimension "${name}" are text, which cannot be converted to boolean; the field is left out.`,
      )
  }

  walk(mapping, schema, "", new Map())
  return out
}

export const mappingErrors = (diags: ReadonlyArray<MappingDiagnostic>): Array<MappingDiagnostic> =>
  diags.filter((d) => d.severity === "error")

export const hasMappingErrors = (diags: ReadonlyArray<MappingDiagnostic>): boolean =>
  diags.some((d) => d.severity === "error")

const TRUE_WORDS = ["yes", "true", "y", "1", "x", "checked"]
const FALSE_WORDS = ["no", "false", "n", "0", "none", "unchecked"]

const PREFERRED: Readonly<Record<MappingAgent["value_type"], ReadonlyArray<JsonType>>> = {
  string: ["string"],
  number: ["number", "integer"],
  bool: ["boolean"],
  date: ["string"],
  datetime: ["string"],
}

/**
 * The values a resolved value (text) can become at a schema `position` (a schema inside `root`), best first:
 * the types the position allows, the one matching `valueType` first (number → number/integer, bool → boolean,
 * else string), then string, number, integer, boolean. Numbers go through `parseNumber` (integers must be
 * integral); booleans accept yes/true/y/1/x/checked and no/false/n/0/none/unchecked (case-insensitive,
 * trimmed). With an `enum`/`const`, a value must be one of the values; strings match case-insensitively after
 * trimming and take the enum's spelling. An untyped position takes the text as is (numbers parsed for number
 * agents, booleans for bool agents, when they parse). Empty when nothing fits. Other keywords (`pattern`,
 * `minimum`, `format`, …) are left to the caller's `PositionCheck`.
 */
export const leafCandidates = (
  value: string,
  root: unknown,
  position: unknown,
  valueType: MappingAgent["value_type"],
): Array<unknown> => {
  const allowed = schemaTypes(root, position)
  const candidates = [
    ...PREFERRED[valueType],
    "string",
    "number",
    "integer",
    "boolean",
  ] as ReadonlyArray<JsonType>
  const order = [...new Set(candidates)].filter((t) =>
    allowed.length === 0 ? t !== "integer" : allowed.includes(t),
  )
  const allowedValues = enumOf(root, position)
  const text = value.trim()
  const out: Array<unknown> = []
  for (const type of order) {
    let converted: unknown
    if (type === "string") converted = value
    else if (type === "boolean") {
      const word = text.toLowerCase()
      converted = TRUE_WORDS.includes(word) ? true : FALSE_WORDS.includes(word) ? false : undefined
    } else {
      const n = parseNumber(text)
      converted = n === undefined || (type === "integer" && !Number.isInteger(n)) ? undefined : n
    }
    if (converted === undefined) continue
    const match =
      allowedValues === undefined
        ? converted
        : allowedValues.find(
            (v) =>
              v === converted ||
              (typeof v === "string" &&
                typeof converted === "string" &&
                v.trim().toLowerCase() === text.toLowerCase()),
          )
    if (match !== undefined && !out.includes(match)) out.push(match)
  }
  return out
}

/** The first of `leafCandidates`, or `{ ok: false }` when nothing fits. */
export const convertLeaf = (
  value: string,
  root: unknown,
  position: unknown,
  valueType: MappingAgent["value_type"],
): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  const candidates = leafCandidates(value, root, position, valueType)
  return candidates.length > 0 ? { ok: true, value: candidates[0] } : { ok: false }
}

/** The text that stands for "nothing found" when an agent's `value_if_not_found` is empty. */
export const NOT_FOUND_TEXT = "n/a"

/** The member of an enriched answer that lists what could not be given (`MissingValue`s). */
export const MISSING_KEY = "_missing"

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

/**
 * A rendered node. `value` is absent when the node gives nothing; `ok` is false when `value` cannot be valid
 * (an object without a required field, an array its schema refuses), with `problems` saying why: parents
 * treat it as absent, the root reports it. `filled`: whether an agent leaf below produced a value
 * (`dimension_value` leaves do not count). `fallback`: the agent's value_if_not_found, converted and accepted,
 * for a required field without a value; `why`: why there is no value.
 */
interface Rendered {
  readonly value?: unknown
  /** The value with its enrich annotations (enrich only). */
  readonly shown?: unknown
  readonly ok: boolean
  readonly filled: boolean
  readonly leaf?: LeafResult
  readonly fallback?: unknown
  readonly why?: string
  readonly problems: ReadonlyArray<MissingValue>
}

const nothing = (why: string): Rendered => ({ ok: true, filled: false, why, problems: [] })

/** One property of an object being rendered: its value and view (if any) and its enrich annotations. */
interface Field {
  readonly name: string
  readonly value?: unknown
  readonly shown?: unknown
  readonly annotations: ReadonlyArray<readonly [string, unknown]>
}

/**
 * Renders resolved values in the shape of `schema`, so that the answer validates against it (see the README,
 * "Output schemas"). Diagnostics are recomputed and every node at a path with a diagnostic gives nothing.
 * Objects follow the schema's property order. A field gets the first conversion of its value that the field's
 * schema accepts (`options.check`); a field whose value was not found or has no such conversion is `null`
 * where the schema allows null, else left out (as is one without a result or with a diagnostic). A required
 * field without a value gets `null` where allowed, else the agent's value_if_not_found (`n/a` when empty)
 * converted to the field's type when the field accepts it; else its object cannot be valid: an object that is
 * not required is then left out, an array item or a dimension-keyed value is dropped, a required object
 * passes the problem up, and at the root the answer is not valid (`valid: false`). Every such loss of a
 * filled object or item is listed in `missing`. An object node with no agent value below it (null counts)
 * renders to nothing, except at the root, which is always an object; arrays and dimension-keyed objects
 * follow the dimension's value order. A `dimension_value` leaf is converted like a string agent's value,
 * except that text with letters is never a number. With `enrich`, properties filled by an agent gain
 * `<field>_consistency` and `<field>_service_url` whenever the lookup found a result, and the root gains
 * `_missing` (the `missing` list) when something is missing, but only where the schema admits those keys (a
 * closed object gets none), so an enriched answer validates whenever the plain one does; an answer that
 * cannot validate carries `_missing` at its root regardless.
 */
export const renderSchema = (
  schema: unknown,
  mapping: MappingNode,
  ctx: MappingContext,
  lookup: LeafLookup,
  options: RenderOptions,
): SchemaRendering => {
  const flagged = new Map<string, Array<string>>()
  for (const d of validateMapping(schema, mapping, ctx)) {
    const said = `${d.code} ${d.severity}`
    const list = flagged.get(d.path) ?? []
    if (!list.includes(said)) flagged.set(d.path, [...list, said])
  }
  const check = options.check ?? nullCheck(schema)
  const accepts = (position: unknown, value: unknown) => check(position, value).length === 0
  const dimensionValues = (name: string) => ctx.dimensions.find((d) => d.name === name)?.values ?? []
  const missing: Array<MissingValue> = []
  const problem = (path: string, scope: ReadonlyMap<string, string>, message: string): MissingValue => ({
    path,
    dimension_values: Object.fromEntries(scope),
    message,
  })
  const report = (problems: ReadonlyArray<MissingValue>, consequence: string) => {
    for (const p of problems) missing.push({ ...p, message: `${p.message}; ${consequence}` })
  }

  /** The agent's value_if_not_found as the field's value, when the field's schema accepts it. */
  const notFoundValue = (agent: MappingAgent, position: unknown) => {
    const text = agent.value_if_not_found?.trim() || NOT_FOUND_TEXT
    const value = leafCandidates(text, schema, position, agent.value_type).find((c) => accepts(position, c))
    return { text, value }
  }

  /** Whether a rendered node gives a usable value: an object node only when some agent leaf below has one. */
  const usable = (node: MappingNode, r: Rendered) =>
    r.ok && r.value !== undefined && (node.kind !== "object" || r.filled)

  const render = (
    node: MappingNode,
    position: unknown,
    path: string,
    scope: ReadonlyMap<string, string>,
  ): Rendered => {
    const said = flagged.get(path)
    if (said !== undefined)
      return nothing(`the mapping's ${said.join(" and ")} ${said.length === 1 ? "leaves" : "leave"} it out`)
    switch (node.kind) {
      case "object":
        return renderObject(node, position, path, scope)
      case "array_from_dimension":
      case "object_from_dimension":
        return renderDimension(node, position, path, scope)
      case "scalar_from_agent": {
        const agent = ctx.agents.find((a) => a.name === node.agent_name)
        if (agent === undefined) return nothing(`no agent is named "${node.agent_name}"`)
        const bound: Record<string, string> = {}
        const pins = node.dimension_values ?? {}
        for (const name of agent.dimensions) {
          const v = scope.get(name) ?? (Object.hasOwn(pins, name) ? pins[name] : undefined)
          if (v === undefined) return nothing(`dimension "${name}" has no value here`)
          bound[name] = v
        }
        const leaf = lookup(agent.name, bound)
        const withoutValue = (reason: string): Rendered => {
          const stand = notFoundValue(agent, position)
          return {
            ok: true,
            filled: false,
            ...(leaf === undefined ? {} : { leaf }),
            fallback: stand.value,
            why: `${reason}, and the field accepts neither null nor the agent's value_if_not_found ${JSON.stringify(stand.text)}`,
            problems: [],
          }
        }
        if (leaf === undefined) return withoutValue("nothing has been extracted for it yet")
        let reason = "nothing was found"
        if (leaf.value !== null) {
          const candidates = leafCandidates(leaf.value, schema, position, agent.value_type)
          let refusal: ReadonlyArray<string> | undefined
          for (const c of candidates) {
            const problems = check(position, c)
            if (problems.length === 0)
              return { value: c, shown: c, ok: true, filled: true, leaf, problems: [] }
            refusal ??= problems
          }
          reason =
            refusal === undefined
              ? `the value ${JSON.stringify(leaf.value)} cannot be converted to ${describeTypes(schemaTypes(schema, position))}`
              : `the value ${JSON.stringify(leaf.value)} does not satisfy the field's schema (${refusal.join("; ")})`
        }
        if (accepts(position, null))
          return { value: null, shown: null, ok: true, filled: true, leaf, problems: [] }
        return withoutValue(reason)
      }
      case "dimension_value": {
        const bound = scope.get(node.dimension_name)
        if (bound === undefined) return nothing(`dimension "${node.dimension_name}" has no value here`)
        // a value with letters is a name, not a number ("FY25" is not 25, "Q1" not 1)
        const fits = leafCandidates(bound, schema, position, "string").find(
          (c) => (typeof c !== "number" || !/\p{L}/u.test(bound)) && accepts(position, c),
        )
        const value = fits !== undefined ? fits : accepts(position, null) ? null : undefined
        return value === undefined
          ? nothing(
              `the ${node.dimension_name} value ${JSON.stringify(bound)} does not fit the field's schema`,
            )
          : { value, shown: value, ok: true, filled: false, problems: [] }
      }
    }
  }

  const renderObject = (
    node: Extract<MappingNode, { kind: "object" }>,
    position: unknown,
    path: string,
    scope: ReadonlyMap<string, string>,
  ): Rendered => {
    const known = propertiesOf(schema, position)
    const required = requiredOf(schema, position)
    const fields: Array<Field> = []
    const problems: Array<MissingValue> = []
    let filled = false
    for (const name of new Set([...Object.keys(known), ...required])) {
      const p = child(path, escapeSegment(name))
      const isRequired = required.includes(name)
      const sub = Object.hasOwn(node.properties, name) ? node.properties[name] : undefined
      if (sub === undefined) {
        if (isRequired) problems.push(problem(p, scope, "required, but not mapped"))
        continue
      }
      const r = render(sub, known[name], p, scope)
      let value = usable(sub, r) ? r.value : undefined
      let shown = r.shown ?? value
      // only what is output counts: a left-out child fills nothing
      if (value !== undefined) filled ||= r.filled
      else {
        const lost = !r.ok && r.filled
        if (isRequired && accepts(known[name], null)) {
          value = shown = null
          filled ||= r.filled || r.leaf !== undefined
          if (lost) report(r.problems, `so ${at(p)} is null`)
        } else if (isRequired && r.fallback !== undefined) {
          value = shown = r.fallback
          filled ||= r.leaf !== undefined
        } else if (isRequired) {
          problems.push(
            ...(r.problems.length > 0
              ? r.problems
              : [problem(p, scope, `required, but ${r.why ?? "nothing was found for it"}`)]),
          )
        } else if (lost) report(r.problems, `so ${at(p)} is left out`)
      }
      const annotations: Array<readonly [string, unknown]> =
        options.enrich && r.leaf !== undefined
          ? [
              [`${name}_consistency`, r.leaf.status],
              [`${name}_service_url`, r.leaf.url],
            ]
          : []
      fields.push(value === undefined ? { name, annotations } : { name, value, shown, annotations })
    }
    const value = assemble(fields, "value", new Set())
    const shown = () => (options.enrich ? annotate(position, fields) : value)
    if (problems.length > 0) return { value, shown: shown(), ok: false, filled, problems }
    const refusal = check(position, value)
    if (refusal.length > 0)
      return {
        value,
        shown: shown(),
        ok: false,
        filled,
        problems: [problem(path, scope, `does not validate against its schema (${refusal.join("; ")})`)],
      }
    return { value, shown: shown(), ok: true, filled, problems }
  }

  /** The object of `fields` (their `value`s or `shown` views) with the annotations whose keys are `with`. */
  const assemble = (
    fields: ReadonlyArray<Field>,
    which: "value" | "shown",
    with_: ReadonlySet<string>,
  ): Record<string, unknown> => {
    const entries: Array<[string, unknown]> = []
    for (const f of fields) {
      if (Object.hasOwn(f, "value")) entries.push([f.name, which === "value" ? f.value : f.shown])
      for (const [k, v] of f.annotations) if (with_.has(k)) entries.push([k, v])
    }
    return Object.fromEntries(entries)
  }

  /**
   * The object with as many enrich annotations as its schema admits: an annotation is kept when it adds no
   * problem, and never replaces a property the schema declares or the object has.
   */
  const annotate = (position: unknown, fields: ReadonlyArray<Field>): Record<string, unknown> => {
    const declared = new Set([...Object.keys(propertiesOf(schema, position)), ...fields.map((f) => f.name)])
    const keys = fields.flatMap((f) => f.annotations.map(([k]) => k)).filter((k) => !declared.has(k))
    let which: "value" | "shown" = "shown"
    let base = check(position, assemble(fields, "shown", new Set())).length
    if (base > 0) {
      // children whose annotations do not fit here (a schema that differs in context) keep none
      const plain = check(position, assemble(fields, "value", new Set())).length
      if (base > plain) {
        which = "value"
        base = plain
      }
    }
    const fits = (keep: ReadonlySet<string>) => check(position, assemble(fields, which, keep)).length <= base
    if (keys.length === 0) return assemble(fields, which, new Set())
    const all = new Set(keys)
    if (fits(all)) return assemble(fields, which, all)
    const kept = new Set<string>()
    for (const k of keys) if (fits(new Set([...kept, k]))) kept.add(k)
    return assemble(fields, which, kept)
  }

  const renderDimension = (
    node: Extract<MappingNode, { kind: "array_from_dimension" | "object_from_dimension" }>,
    position: unknown,
    path: string,
    scope: ReadonlyMap<string, string>,
  ): Rendered => {
    const isArray = node.kind === "array_from_dimension"
    const inner = isArray ? itemsOf(schema, position) : additionalPropertiesOf(schema, position)
    const sub = node.kind === "array_from_dimension" ? node.items : node.values
    const subPath = child(path, isArray ? "[*]" : "{*}")
    const values: Array<[string, unknown]> = []
    const views: Array<[string, unknown]> = []
    let filled = false
    for (const dimValue of dimensionValues(node.dimension_name)) {
      const r = render(
        sub,
        inner === true ? {} : inner,
        subPath,
        new Map(scope).set(node.dimension_name, dimValue),
      )
      if (!usable(sub, r)) {
        if (!r.ok && r.filled)
          report(
            r.problems,
            isArray
              ? `so the item for ${node.dimension_name} ${JSON.stringify(dimValue)} is left out of ${at(path)}`
              : `so the key ${JSON.stringify(dimValue)} is left out of ${at(path)}`,
          )
        continue
      }
      values.push([dimValue, r.value])
      views.push([dimValue, r.shown ?? r.value])
      filled ||= r.filled
    }
    const value = isArray ? values.map(([, v]) => v) : Object.fromEntries(values)
    const shown = isArray ? views.map(([, v]) => v) : Object.fromEntries(views)
    const refusal = check(position, value)
    if (refusal.length > 0)
      return {
        value,
        shown,
        ok: false,
        filled,
        problems: [
          problem(
            path,
            scope,
            `${isArray ? `has ${values.length} item(s)` : `has ${values.length} key(s)`}, which its schema does not accept (${refusal.join("; ")})`,
          ),
        ],
      }
    return { value, shown, ok: true, filled, problems: [] }
  }

  const root = render(mapping, schema, "", new Map())
  const value = isRecord(root.value) ? { ...root.value } : {}
  const before = missing.length
  if (!root.ok) report(root.problems, "so the answer does not validate against the schema")
  else {
    const refusal = check(schema, value)
    if (refusal.length > 0)
      report(
        [problem("", new Map(), `the answer does not validate against the schema (${refusal.join("; ")})`)],
        "nothing more can be left out to make it valid",
      )
  }
  const unmet = missing.slice(before)
  const valid = unmet.length === 0
  if (!options.enrich) return { value, valid, missing, unmet }
  let shown = isRecord(root.shown) ? { ...root.shown } : value
  // annotations that the schema admits one by one but not together in context are all dropped
  if (valid && check(schema, shown).length > 0) shown = value
  if (
    missing.length > 0 &&
    !Object.hasOwn(shown, MISSING_KEY) &&
    !Object.hasOwn(propertiesOf(schema, schema), MISSING_KEY)
  ) {
    const withMissing = { ...shown, [MISSING_KEY]: missing }
    if (!valid || check(schema, withMissing).length === 0) shown = withMissing
  }
  return { value: shown, valid, missing, unmet }
}

/** `renderSchema`'s answer alone. */
export const renderSchemaResult = (
  schema: unknown,
  mapping: MappingNode,
  ctx: MappingContext,
  lookup: LeafLookup,
  options: RenderOptions,
): Record<string, unknown> => renderSchema(schema, mapping, ctx, lookup, options).value
