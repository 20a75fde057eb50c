/**
 * The validation of an output mapping (see OutputMapping.ts): an untrusted mapping is walked against the
 * target JSON Schema and the project's agents and dimensions, and every problem becomes a diagnostic with the
 * spec's code. Also the small path and wording helpers that rendering shares. Pure.
 */
import {
  additionalPropertiesOf,
  itemsOf,
  type JsonType,
  propertiesOf,
  requiredOf,
  schemaTypes,
} from "./JsonSchema.ts"
import type {
  MappingAgent,
  MappingContext,
  MappingDiagnostic,
  MappingDiagnosticCode,
  MappingNode,
} from "./OutputMapping.ts"

export const isRecord = (x: unknown): x is Readonly<Record<string, unknown>> =>
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
export const child = (path: string, segment: string): string => (path === "" ? segment : `${path}/${segment}`)
export const escapeSegment = (name: string): string => name.replace(/~/g, "~0").replace(/\//g, "~1")
const an = (kind: string): string => `${/^[aeiou]/.test(kind) ? "an" : "a"} ${kind}`
const capital = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1)
export const at = (path: string): string => (path === "" ? "the root" : `"${path}"`)

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
export const describeTypes = (types: ReadonlyArray<JsonType>) =>
  types.length === 0 ? "any" : types.join(" or ")

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

/** What a walk over one mapping shares: the schema, the project, and where diagnostics go. */
interface Walk {
  readonly schema: unknown
  readonly ctx: MappingContext
  readonly report: (path: string, code: MappingDiagnosticCode, message: string) => void
}

const dimension = (w: Walk, name: string) => w.ctx.dimensions.find((d) => d.name === name)

const mismatch = (w: Walk, path: string, types: ReadonlyArray<JsonType>, kind: string, detail = "") =>
  w.report(
    path,
    "node_kind_mismatch",
    `The schema at ${at(path)} expects ${describeTypes(types)}, which ${an(kind)} node cannot produce${detail}.`,
  )

/** Checks the dimension of an array/object_from_dimension node; false when the walk cannot descend. */
const bindable = (w: Walk, path: string, name: string, scope: Scope): boolean => {
  if (dimension(w, name) === undefined) {
    w.report(path, "dimension_not_found", `The project has no dimension named "${name}".`)
    return false
  }
  const outer = scope.get(name)
  if (outer !== undefined)
    w.report(
      path,
      "dimension_not_in_scope",
      `Dimension "${name}" is already bound by the enclosing ${outer.kind} at ${at(outer.path)}; a dimension can be iterated only once along a path.`,
    )
  return true
}

const walk = (w: Walk, node: unknown, position: unknown, path: string, scope: Scope): void => {
  const problem = malformation(node)
  if (problem !== undefined) {
    w.report(path, "node_kind_mismatch", problem)
    return
  }
  const n = node as MappingNode
  const types = schemaTypes(w.schema, position)
  switch (n.kind) {
    case "object":
      walkObject(w, n, types, position, path, scope)
      return
    case "array_from_dimension":
    case "object_from_dimension":
      walkDimension(w, n, types, position, path, scope)
      return
    case "scalar_from_agent":
      checkScalar(w, n, types, path, scope)
      return
    case "dimension_value":
      checkDimensionValue(w, n, types, path, scope)
  }
}

const walkObject = (
  w: Walk,
  n: Extract<MappingNode, { kind: "object" }>,
  types: ReadonlyArray<JsonType>,
  position: unknown,
  path: string,
  scope: Scope,
) => {
  if (!accepts(types, "object")) {
    mismatch(w, path, types, n.kind)
    return
  }
  const known = propertiesOf(w.schema, position)
  for (const [name, sub] of Object.entries(n.properties)) {
    const p = child(path, escapeSegment(name))
    if (Object.hasOwn(known, name)) walk(w, sub, known[name], p, scope)
    else w.report(p, "property_not_in_schema", `The schema defines no property "${name}" here.`)
  }
  for (const name of requiredOf(w.schema, position))
    if (!Object.hasOwn(n.properties, name))
      w.report(
        child(path, escapeSegment(name)),
        "required_unmapped",
        `Required property "${name}" is not mapped; it will be missing from the results.`,
      )
}

const walkDimension = (
  w: Walk,
  n: Extract<MappingNode, { kind: "array_from_dimension" | "object_from_dimension" }>,
  types: ReadonlyArray<JsonType>,
  position: unknown,
  path: string,
  scope: Scope,
) => {
  const isArray = n.kind === "array_from_dimension"
  const inner = isArray ? itemsOf(w.schema, position) : additionalPropertiesOf(w.schema, position)
  if (!accepts(types, isArray ? "array" : "object")) {
    mismatch(w, path, types, n.kind)
    return
  }
  if (inner === false) {
    const what = isArray ? "no items" : "no keys besides its properties"
    mismatch(w, path, types, n.kind, `: the schema allows ${what}`)
    return
  }
  if (!bindable(w, path, n.dimension_name, scope)) return
  const sub = n.kind === "array_from_dimension" ? n.items : n.values
  const bound = new Map(scope)
  if (!bound.has(n.dimension_name)) bound.set(n.dimension_name, { kind: n.kind, path })
  walk(w, sub, inner === true ? {} : inner, child(path, isArray ? "[*]" : "{*}"), bound)
}

const fitsScalar = (types: ReadonlyArray<JsonType>) =>
  types.length === 0 || types.some((t) => SCALAR_TYPES.includes(t))

const checkScalar = (
  w: Walk,
  n: Extract<MappingNode, { kind: "scalar_from_agent" }>,
  types: ReadonlyArray<JsonType>,
  path: string,
  scope: Scope,
) => {
  const fits = fitsScalar(types)
  if (!fits) mismatch(w, path, types, n.kind)
  const matches = w.ctx.agents.filter((a) => a.name === n.agent_name)
  if (matches.length === 0)
    w.report(path, "agent_not_found", `The project has no agent named "${n.agent_name}".`)
  if (matches.length > 1)
    w.report(
      path,
      "agent_ambiguous",
      `${matches.length} agents are named "${n.agent_name}"; rename them so the mapping can tell them apart.`,
    )
  const agent = matches.length === 1 ? matches[0] : undefined
  const pins = n.dimension_values ?? {}
  for (const [name, value] of Object.entries(pins)) checkPin(w, agent, name, value, path, scope)
  if (agent === undefined) return
  for (const name of agent.dimensions)
    if (!scope.has(name) && !Object.hasOwn(pins, name))
      w.report(
        path,
        "dimension_not_in_scope",
        `Agent "${agent.name}" is split by dimension "${name}", which no enclosing array_from_dimension or object_from_dimension binds; pin it in dimension_values or map the field inside one.`,
      )
  const scalars = types.filter((t) => SCALAR_TYPES.includes(t))
  if (fits && scalars.length > 0 && !scalars.some((t) => COMPATIBLE[agent.value_type].includes(t)))
    w.report(
      path,
      "type_incompatible",
      `Agent "${agent.name}" produces ${agent.value_type} values, which cannot be converted to ${describeTypes(scalars)}; the field is left out.`,
    )
}

/** One entry of a scalar_from_agent node's `dimension_values`. */
const checkPin = (
  w: Walk,
  agent: MappingAgent | undefined,
  name: string,
  value: string,
  path: string,
  scope: Scope,
) => {
  const dim = dimension(w, name)
  const outer = scope.get(name)
  if (dim === undefined)
    w.report(path, "dimension_not_found", `The project has no dimension named "${name}".`)
  else if (outer !== undefined)
    w.report(
      path,
      "dimension_not_in_scope",
      `Dimension "${name}" is pinned in dimension_values but already bound by the enclosing ${outer.kind} at ${at(outer.path)}; remove the pin.`,
    )
  else if (agent !== undefined && !agent.dimensions.includes(name))
    w.report(
      path,
      "dimension_not_on_agent",
      `Agent "${agent.name}" is not split by dimension "${name}"; remove it from dimension_values.`,
    )
  else if (!dim.values.includes(value))
    w.report(
      path,
      "dimension_value_unknown",
      `Dimension "${name}" has no value "${value}" yet; the field is left out until it appears.`,
    )
}

/** A dimension's values are text: they fit strings, and numbers when they parse; never booleans only. */
const checkDimensionValue = (
  w: Walk,
  n: Extract<MappingNode, { kind: "dimension_value" }>,
  types: ReadonlyArray<JsonType>,
  path: string,
  scope: Scope,
) => {
  const fits = fitsScalar(types)
  if (!fits) mismatch(w, path, types, n.kind)
  const name = n.dimension_name
  if (dimension(w, name) === undefined)
    w.report(path, "dimension_not_found", `The project has no dimension named "${name}".`)
  else if (!scope.has(name))
    w.report(
      path,
      "dimension_not_in_scope",
      `Dimension "${name}" has a value only inside an array_from_dimension or object_from_dimension over it; map the field inside one.`,
    )
  const scalars = types.filter((t) => SCALAR_TYPES.includes(t))
  if (fits && scalars.length > 0 && scalars.every((t) => t === "boolean"))
    w.report(
      path,
      "type_incompatible",
      `The values of dimension "${name}" are text, which cannot be converted to boolean; the field is left out.`,
    )
}

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
  walk({ schema, ctx, report }, mapping, schema, "", new Map())
  return out
}

export const mappingErrors = (diags: ReadonlyArray<MappingDiagnostic>): Array<MappingDiagnostic> =>
  diags.filter((d) => d.severity === "error")

export const hasMappingErrors = (diags: ReadonlyArray<MappingDiagnostic>): boolean =>
  diags.some((d) => d.severity === "error")
