/**
 * Output mapping: a declarative tree that maps agents (named extractors with string values) and dimensions
 * (named value lists) onto the fields of a project's target JSON Schema. Arrays and dimension-keyed objects
 * iterate a dimension's values; inside them, `scalar_from_agent` leaves take the agent's value for the bound
 * value, and `dimension_value` leaves the bound value itself (which item or key it is). `validateMapping`
 * checks an untrusted mapping against the schema and the project's agents and dimensions;
 * `renderSchemaResult` renders resolved values in the schema's shape, leaving out every node that has a
 * diagnostic. Pure.
 */

import type { DiagnosticCode, ResolutionStatus } from "./Enums.ts"
import {
  additionalPropertiesOf,
  enumOf,
  isNullable,
  itemsOf,
  type JsonType,
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
 * Converts a resolved value (text) to the JSON type of a schema `position` (a schema inside `root`): tries the
 * types the position allows, the one matching `valueType` first (number → number/integer, bool → boolean, else
 * string), then string, number, integer, boolean. Numbers go through `parseNumber` (integers must be integral);
 * booleans accept yes/true/y/1/x/checked and no/false/n/0/none/unchecked (case-insensitive, trimmed). With an
 * `enum`/`const`, the converted value must be one of the values; strings match case-insensitively after
 * trimming and take the enum's spelling. An untyped position takes the text as is (numbers parsed for number
 * agents, booleans for bool agents, when they parse). `{ ok: false }` when nothing fits.
 */
export const convertLeaf = (
  value: string,
  root: unknown,
  position: unknown,
  valueType: MappingAgent["value_type"],
): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
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
    if (allowedValues === undefined) return { ok: true, value: converted }
    const match = allowedValues.find(
      (v) =>
        v === converted ||
        (typeof v === "string" &&
          typeof converted === "string" &&
          v.trim().toLowerCase() === text.toLowerCase()),
    )
    if (match !== undefined) return { ok: true, value: match }
  }
  return { ok: false }
}

/**
 * A rendered node: its JSON value (absent when omitted), whether any agent leaf below produced a value
 * (`dimension_value` leaves do not count), its agent leaf.
 */
interface Rendered {
  readonly value?: unknown
  readonly filled: boolean
  readonly leaf?: LeafResult
}

const NOTHING: Rendered = { filled: false }

/**
 * Renders resolved values in the shape of `schema`. Diagnostics are recomputed and every node at a path with
 * any diagnostic is left out. Object nodes keep the properties that rendered; an object node with no agent
 * value below it (null counts) renders to nothing, except at the root, which is always an object, so an item
 * whose only field is its `dimension_value` is dropped. Arrays and dimension-keyed objects follow the
 * dimension's value order and drop entries that render to nothing; `items`/`values` that are themselves a
 * `dimension_value` give every value. A `dimension_value` leaf is converted like a string agent's value
 * (`convertLeaf`), except that text with letters is never a number, and left out (null when nullable) when it
 * does not fit. With `enrich`, properties filled by an agent gain `<field>_consistency` and
 * `<field>_service_url` whenever the lookup found a result.
 */
export const renderSchemaResult = (
  schema: unknown,
  mapping: MappingNode,
  ctx: MappingContext,
  lookup: LeafLookup,
  options: RenderOptions,
): Record<string, unknown> => {
  const flagged = new Set(validateMapping(schema, mapping, ctx).map((d) => d.path))
  const dimensionValues = (name: string) => ctx.dimensions.find((d) => d.name === name)?.values ?? []

  const render = (
    node: MappingNode,
    position: unknown,
    path: string,
    scope: ReadonlyMap<string, string>,
  ): Rendered => {
    if (flagged.has(path)) return NOTHING
    switch (node.kind) {
      case "object": {
        const known = propertiesOf(schema, position)
        const entries: Array<[string, unknown]> = []
        let filled = false
        for (const [name, sub] of Object.entries(node.properties)) {
          const r = render(sub, known[name], child(path, escapeSegment(name)), scope)
          if (kept(sub, r)) entries.push([name, r.value])
          if (options.enrich && r.leaf !== undefined)
            entries.push([`${name}_consistency`, r.leaf.status], [`${name}_service_url`, r.leaf.url])
          filled ||= r.filled
        }
        return { value: Object.fromEntries(entries), filled }
      }
      case "array_from_dimension":
      case "object_from_dimension": {
        const isArray = node.kind === "array_from_dimension"
        const inner = isArray ? itemsOf(schema, position) : additionalPropertiesOf(schema, position)
        const sub = node.kind === "array_from_dimension" ? node.items : node.values
        const subPath = child(path, isArray ? "[*]" : "{*}")
        const entries: Array<[string, unknown]> = []
        let filled = false
        for (const dimValue of dimensionValues(node.dimension_name)) {
          const r = render(
            sub,
            inner === true ? {} : inner,
            subPath,
            new Map(scope).set(node.dimension_name, dimValue),
          )
          if (!kept(sub, r)) continue
          entries.push([dimValue, r.value])
          filled ||= r.filled
        }
        const value = isArray ? entries.map(([, v]) => v) : Object.fromEntries(entries)
        return { value, filled }
      }
      case "scalar_from_agent": {
        const agent = ctx.agents.find((a) => a.name === node.agent_name)
        if (agent === undefined) return NOTHING
        const bound: Record<string, string> = {}
        for (const name of agent.dimensions) {
          const pins = node.dimension_values ?? {}
          const v = scope.get(name) ?? (Object.hasOwn(pins, name) ? pins[name] : undefined)
          if (v === undefined) return NOTHING
          bound[name] = v
        }
        const leaf = lookup(agent.name, bound)
        if (leaf === undefined) return NOTHING
        const nullable = isNullable(schema, position)
        const converted =
          leaf.value === null
            ? { ok: false as const }
            : convertLeaf(leaf.value, schema, position, agent.value_type)
        const value = converted.ok ? converted.value : nullable ? null : undefined
        return { value, filled: value !== undefined, leaf }
      }
      case "dimension_value": {
        const bound = scope.get(node.dimension_name)
        if (bound === undefined) return NOTHING
        const converted = convertLeaf(bound, schema, position, "string")
        // a value with letters is a name, not a number ("FY25" is not 25, "Q1" not 1)
        const fits = converted.ok && (typeof converted.value !== "number" || !/\p{L}/u.test(bound))
        const value = fits ? converted.value : isNullable(schema, position) ? null : undefined
        return { value, filled: false }
      }
    }
  }

  /** Whether a rendered node produces output: an object node only when some agent leaf below has a value. */
  const kept = (node: MappingNode, r: Rendered) =>
    r.value !== undefined && (node.kind !== "object" || r.filled)

  const root = render(mapping, schema, "", new Map())
  return isRecord(root.value) ? { ...root.value } : {}
}
