/**
 * The rendering of resolved values through an output mapping (see OutputMapping.ts) in the shape of the
 * target JSON Schema, leaving out every node with a diagnostic and listing what required values could not be
 * given. Pure.
 */
import {
  additionalPropertiesOf,
  itemsOf,
  nullCheck,
  type PositionCheck,
  propertiesOf,
  requiredOf,
  schemaTypes,
} from "./JsonSchema.ts"
import type {
  LeafLookup,
  LeafResult,
  MappingAgent,
  MappingContext,
  MappingNode,
  MissingValue,
  RenderOptions,
  SchemaRendering,
} from "./OutputMapping.ts"
import { leafCandidates, NOT_FOUND_TEXT } from "./OutputMappingCoercion.ts"
import {
  at,
  child,
  describeTypes,
  escapeSegment,
  isRecord,
  validateMapping,
} from "./OutputMappingValidation.ts"

/** The member of an enriched answer that lists what could not be given (`MissingValue`s). */
export const MISSING_KEY = "_missing"

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

/** Values of the dimensions bound on the way to a node, by dimension name. */
type Scope = ReadonlyMap<string, string>

/** What a rendering shares: its inputs, the paths the mapping's diagnostics flag, and what is missing. */
interface Job {
  readonly schema: unknown
  readonly ctx: MappingContext
  readonly lookup: LeafLookup
  readonly options: RenderOptions
  /** The diagnostics (`code severity`) at each flagged path. */
  readonly flagged: ReadonlyMap<string, ReadonlyArray<string>>
  readonly check: PositionCheck
  readonly missing: Array<MissingValue>
}

const accepts = (job: Job, position: unknown, value: unknown) => job.check(position, value).length === 0

const dimensionValues = (job: Job, name: string) =>
  job.ctx.dimensions.find((d) => d.name === name)?.values ?? []

const problem = (path: string, scope: Scope, message: string): MissingValue => ({
  path,
  dimension_values: Object.fromEntries(scope),
  message,
})

const report = (job: Job, problems: ReadonlyArray<MissingValue>, consequence: string) => {
  for (const p of problems) job.missing.push({ ...p, message: `${p.message}; ${consequence}` })
}

/** The agent's value_if_not_found as the field's value, when the field's schema accepts it. */
const notFoundValue = (job: Job, agent: MappingAgent, position: unknown) => {
  const text = agent.value_if_not_found?.trim() || NOT_FOUND_TEXT
  const value = leafCandidates(text, job.schema, position, agent.value_type).find((c) =>
    accepts(job, position, c),
  )
  return { text, value }
}

/** Whether a rendered node gives a usable value: an object node only when some agent leaf below has one. */
const usable = (node: MappingNode, r: Rendered) =>
  r.ok && r.value !== undefined && (node.kind !== "object" || r.filled)

const render = (job: Job, node: MappingNode, position: unknown, path: string, scope: Scope): Rendered => {
  const said = job.flagged.get(path)
  if (said !== undefined)
    return nothing(`the mapping's ${said.join(" and ")} ${said.length === 1 ? "leaves" : "leave"} it out`)
  switch (node.kind) {
    case "object":
      return renderObject(job, node, position, path, scope)
    case "array_from_dimension":
    case "object_from_dimension":
      return renderDimension(job, node, position, path, scope)
    case "scalar_from_agent":
      return renderAgentValue(job, node, position, scope)
    case "dimension_value":
      return renderDimensionValue(job, node, position, scope)
  }
}

const renderAgentValue = (
  job: Job,
  node: Extract<MappingNode, { kind: "scalar_from_agent" }>,
  position: unknown,
  scope: Scope,
): Rendered => {
  const { schema } = job
  const agent = job.ctx.agents.find((a) => a.name === node.agent_name)
  if (agent === undefined) return nothing(`no agent is named "${node.agent_name}"`)
  const bound: Record<string, string> = {}
  const pins = node.dimension_values ?? {}
  for (const name of agent.dimensions) {
    const v = scope.get(name) ?? (Object.hasOwn(pins, name) ? pins[name] : undefined)
    if (v === undefined) return nothing(`dimension "${name}" has no value here`)
    bound[name] = v
  }
  const leaf = job.lookup(agent.name, bound)
  const withoutValue = (reason: string): Rendered => {
    const stand = notFoundValue(job, agent, position)
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
      const problems = job.check(position, c)
      if (problems.length === 0) return { value: c, shown: c, ok: true, filled: true, leaf, problems: [] }
      refusal ??= problems
    }
    reason =
      refusal === undefined
        ? `the value ${JSON.stringify(leaf.value)} cannot be converted to ${describeTypes(schemaTypes(schema, position))}`
        : `the value ${JSON.stringify(leaf.value)} does not satisfy the field's schema (${refusal.join("; ")})`
  }
  if (accepts(job, position, null))
    return { value: null, shown: null, ok: true, filled: true, leaf, problems: [] }
  return withoutValue(reason)
}

const renderDimensionValue = (
  job: Job,
  node: Extract<MappingNode, { kind: "dimension_value" }>,
  position: unknown,
  scope: Scope,
): Rendered => {
  const bound = scope.get(node.dimension_name)
  if (bound === undefined) return nothing(`dimension "${node.dimension_name}" has no value here`)
  // a value with letters is a name, not a number ("FY25" is not 25, "Q1" not 1)
  const fits = leafCandidates(bound, job.schema, position, "string").find(
    (c) => (typeof c !== "number" || !/\p{L}/u.test(bound)) && accepts(job, position, c),
  )
  const value = fits !== undefined ? fits : accepts(job, position, null) ? null : undefined
  return value === undefined
    ? nothing(`the ${node.dimension_name} value ${JSON.stringify(bound)} does not fit the field's schema`)
    : { value, shown: value, ok: true, filled: false, problems: [] }
}

const renderObject = (
  job: Job,
  node: Extract<MappingNode, { kind: "object" }>,
  position: unknown,
  path: string,
  scope: Scope,
): Rendered => {
  const known = propertiesOf(job.schema, position)
  const required = requiredOf(job.schema, position)
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
    const r = render(job, sub, known[name], p, scope)
    let value = usable(sub, r) ? r.value : undefined
    let shown = r.shown ?? value
    // only what is output counts: a left-out child fills nothing
    if (value !== undefined) filled ||= r.filled
    else {
      const lost = !r.ok && r.filled
      if (isRequired && accepts(job, known[name], null)) {
        value = shown = null
        filled ||= r.filled || r.leaf !== undefined
        if (lost) report(job, r.problems, `so ${at(p)} is null`)
      } else if (isRequired && r.fallback !== undefined) {
        value = shown = r.fallback
        filled ||= r.leaf !== undefined
      } else if (isRequired) {
        problems.push(
          ...(r.problems.length > 0
            ? r.problems
            : [problem(p, scope, `required, but ${r.why ?? "nothing was found for it"}`)]),
        )
      } else if (lost) report(job, r.problems, `so ${at(p)} is left out`)
    }
    const annotations: Array<readonly [string, unknown]> =
      job.options.enrich && r.leaf !== undefined
        ? [
            [`${name}_consistency`, r.leaf.status],
            [`${name}_service_url`, r.leaf.url],
          ]
        : []
    fields.push(value === undefined ? { name, annotations } : { name, value, shown, annotations })
  }
  const value = assemble(fields, "value", new Set())
  const shown = () => (job.options.enrich ? annotate(job, position, fields) : value)
  if (problems.length > 0) return { value, shown: shown(), ok: false, filled, problems }
  const refusal = job.check(position, value)
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
const annotate = (job: Job, position: unknown, fields: ReadonlyArray<Field>): Record<string, unknown> => {
  const declared = new Set([...Object.keys(propertiesOf(job.schema, position)), ...fields.map((f) => f.name)])
  const keys = fields.flatMap((f) => f.annotations.map(([k]) => k)).filter((k) => !declared.has(k))
  let which: "value" | "shown" = "shown"
  let base = job.check(position, assemble(fields, "shown", new Set())).length
  if (base > 0) {
    // children whose annotations do not fit here (a schema that differs in context) keep none
    const plain = job.check(position, assemble(fields, "value", new Set())).length
    if (base > plain) {
      which = "value"
      base = plain
    }
  }
  const fits = (keep: ReadonlySet<string>) =>
    job.check(position, assemble(fields, which, keep)).length <= base
  if (keys.length === 0) return assemble(fields, which, new Set())
  const all = new Set(keys)
  if (fits(all)) return assemble(fields, which, all)
  const kept = new Set<string>()
  for (const k of keys) if (fits(new Set([...kept, k]))) kept.add(k)
  return assemble(fields, which, kept)
}

const renderDimension = (
  job: Job,
  node: Extract<MappingNode, { kind: "array_from_dimension" | "object_from_dimension" }>,
  position: unknown,
  path: string,
  scope: Scope,
): Rendered => {
  const isArray = node.kind === "array_from_dimension"
  const inner = isArray ? itemsOf(job.schema, position) : additionalPropertiesOf(job.schema, position)
  const sub = node.kind === "array_from_dimension" ? node.items : node.values
  const subPath = child(path, isArray ? "[*]" : "{*}")
  const values: Array<[string, unknown]> = []
  const views: Array<[string, unknown]> = []
  let filled = false
  for (const dimValue of dimensionValues(job, node.dimension_name)) {
    const r = render(
      job,
      sub,
      inner === true ? {} : inner,
      subPath,
      new Map(scope).set(node.dimension_name, dimValue),
    )
    if (!usable(sub, r)) {
      if (!r.ok && r.filled)
        report(
          job,
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
  const refusal = job.check(position, value)
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
  const missing: Array<MissingValue> = []
  const job: Job = { schema, ctx, lookup, options, flagged, check, missing }
  const root = render(job, mapping, schema, "", new Map())
  const value = isRecord(root.value) ? { ...root.value } : {}
  const before = missing.length
  if (!root.ok) report(job, root.problems, "so the answer does not validate against the schema")
  else {
    const refusal = check(schema, value)
    if (refusal.length > 0)
      report(
        job,
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
