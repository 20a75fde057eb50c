/**
 * Automatic output mapping: from a target JSON Schema, plans the dimensions and agents to create (reusing
 * matching existing ones) and the mapping that fills the schema from them. Objects recurse, scalars get one
 * agent each, arrays and dimension-keyed objects (`additionalProperties`) iterate a new dimension. In an item
 * object of such an iteration, one text property that names the item (its key or label is the dimension's
 * name or singular, or else `name`, `label`, `key` or `id`) takes the dimension's value (`dimension_value`)
 * instead of an agent, when the item has other fields. Pure and deterministic: the same schema and project
 * give the same plan, in schema order; planning again with the plan's agents and dimensions as existing
 * reuses them all.
 */
import {
  additionalPropertiesOf,
  enumOf,
  examplesOf,
  itemsOf,
  keywordOf,
  propertiesOf,
  schemaTypes,
  unwrap,
} from "./JsonSchema.ts"
import type { MappingNode } from "./OutputMapping.ts"

export interface PlannedDimension {
  readonly name: string
  readonly description: string
  readonly example_values: string
}

export interface PlannedAgent {
  readonly name: string
  readonly extraction_instructions: string
  readonly value_type: "string" | "number"
  readonly unit: string
  readonly examples: string
  readonly resolution_instructions: string
  /** Names of the dimensions to attach, outermost first. */
  readonly dimensions: ReadonlyArray<string>
  /** The mapping position it fills, e.g. `line_items/[*]/amount`. */
  readonly path: string
}

export interface ExistingAgent {
  readonly name: string
  readonly value_type: string
  readonly dimensions: ReadonlyArray<string>
}

export interface ExistingDimension {
  readonly name: string
  readonly source: "CUSTOM" | "DOCUMENT" | "TAG"
}

export type AutoMappingPlan =
  | {
      readonly ok: true
      readonly dimensions: ReadonlyArray<PlannedDimension>
      readonly agents: ReadonlyArray<PlannedAgent>
      readonly mapping: MappingNode
    }
  | { readonly ok: false; readonly error: string }

export const MAX_MAPPED_FIELDS = 200
const MAX_DEPTH = 8
const MAX_NAME = 120
/** Bounds the walk of schemas that reuse `$defs` exponentially without adding fields. */
const MAX_VISITS = 10_000

// ---- labels -------------------------------------------------------------------------------------------

const ACRONYMS = new Set("id vat iban bic swift url uri sku po iso eu uk us".split(" "))
const isAcronym = (word: string) => /^[A-Z0-9]{2,}$/.test(word) && /[A-Z]/.test(word)
const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)
/** A label inside a sentence or after another label: words lower-cased except acronyms. */
const prose = (label: string) =>
  label
    .split(" ")
    .map((w) => (isAcronym(w) ? w : w.toLowerCase()))
    .join(" ")
const joinLabels = (labels: ReadonlyArray<string>) =>
  labels.map((l, i) => (i === 0 ? capitalize(l) : prose(l))).join(" ")

/** `invoice_number`, `invoiceNumber`, `invoice-number` → "Invoice number"; `vat_id` → "VAT ID". */
export const humanize = (key: string): string => {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[\s_\-.]+/)
    .filter((w) => w !== "")
    .map((w) => (isAcronym(w) ? w : ACRONYMS.has(w.toLowerCase()) ? w.toUpperCase() : w.toLowerCase()))
  return capitalize(words.join(" "))
}

const IRREGULAR: Readonly<Record<string, string>> = {
  people: "person",
  children: "child",
  men: "man",
  women: "woman",
}
const singularWord = (word: string): string => {
  const lower = word.toLowerCase()
  const irregular = IRREGULAR[lower]
  if (irregular !== undefined) return word.charAt(0) === lower.charAt(0) ? irregular : capitalize(irregular)
  if (/[^aeiou]ies$/i.test(word)) return `${word.slice(0, -3)}${word.slice(-3) === "IES" ? "Y" : "y"}`
  if (/(ss|sh|ch|x|zz|us)es$/i.test(word)) return word.slice(0, -2)
  if (/(ss|us|is)$/i.test(word) || !/s$/i.test(word) || word.length < 3) return word
  return word.slice(0, -1)
}
/** The singular of a label: its last word singularized ("Line items" → "Line item"). */
export const singularize = (label: string): string => {
  const words = label.split(" ")
  return [...words.slice(0, -1), singularWord(words[words.length - 1] ?? "")].join(" ")
}

/** "Totals by region" → dimension "Region", value "Total by region"; else both the singular. */
const keyedLabels = (label: string): { readonly dimension: string; readonly element: string } => {
  const m = /^(.+?) (by|per) (.+)$/i.exec(label)
  if (m === null) return { dimension: singularize(label), element: singularize(label) }
  return { dimension: capitalize(m[3]!), element: `${singularize(m[1]!)} ${m[2]} ${m[3]}` }
}

const clip = (base: string, suffix = "") => `${base.slice(0, MAX_NAME - suffix.length).trimEnd()}${suffix}`
const show = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v))
const sentence = (s: string) => (/[.!?]$/.test(s.trim()) ? s.trim() : `${s.trim()}.`)

// ---- analysis: which fields are mappable, and how --------------------------------------------------------

interface ObjectShape {
  readonly kind: "object"
  readonly fields: ReadonlyArray<Field>
}
interface ScalarShape {
  readonly kind: "scalar"
  readonly schema: unknown
}
type Shape =
  | ObjectShape
  | ScalarShape
  | {
      readonly kind: "collection"
      readonly over: "array" | "keyed"
      /** Label of the dimension, and of one element (array items / keyed values). */
      readonly dimension: string
      readonly element: string
      /** The schema's description of the collection or its elements, if any. */
      readonly description: string | undefined
      /** Examples of the dimension's values: keys of keyed examples, items of array examples. */
      readonly examples: ReadonlyArray<unknown>
      readonly items: ObjectShape | ScalarShape
      /** One element per uploaded document: iterated by the system Document dimension. */
      readonly perDocument: boolean
    }
interface Field {
  readonly key: string
  readonly label: string
  readonly shape: Shape
}

class Abort {
  constructor(readonly error: string) {}
}

const isRecord = (x: unknown): x is Readonly<Record<string, unknown>> =>
  typeof x === "object" && x !== null && !Array.isArray(x)

/** The `$ref`s `unwrap` follows at a position (its own and its `anyOf`/`oneOf`/`allOf` branches'). */
const refsOf = (s: unknown): ReadonlyArray<string> =>
  isRecord(s)
    ? [
        ...(typeof s.$ref === "string" ? [s.$ref] : []),
        ...["anyOf", "oneOf", "allOf"].flatMap((k) => {
          const branches = s[k]
          return Array.isArray(branches) ? branches.flatMap(refsOf) : []
        }),
      ]
    : []

const SCALARS = new Set(["string", "number", "integer", "boolean"])

const classify = (root: unknown, s: unknown): "scalar" | "object" | "array" | "keyed" | "none" => {
  const { schema } = unwrap(root, s)
  if (schema === false) return "none"
  const types = schemaTypes(root, s)
  if (types.every((t) => SCALARS.has(t))) return "scalar"
  if (types.length !== 1 || typeof schema === "boolean") return "none"
  if (types[0] === "object") {
    if (Object.keys(propertiesOf(root, s)).length > 0) return "object"
    return isRecord(additionalPropertiesOf(root, s)) ? "keyed" : "none"
  }
  if (types[0] === "array" && schema.prefixItems === undefined && !Array.isArray(schema.items)) return "array"
  return "none"
}

const labelOf = (root: unknown, key: string, s: unknown): string => {
  const title = keywordOf(root, s, "title")?.replace(/\s+/g, " ").trim()
  return clip(title || humanize(key) || "Field")
}

/**
 * Example values of a dimension: scalar examples as written, object examples by their `key` property when it
 * is a string, else by their first string.
 */
const exampleValues = (values: ReadonlyArray<unknown>, key?: string): string => {
  const texts = values.flatMap((v) => {
    if (isRecord(v)) {
      const named = key === undefined ? undefined : v[key]
      const first = typeof named === "string" ? named : Object.values(v).find((x) => typeof x === "string")
      return first === undefined ? [] : [first as string]
    }
    return v === null || Array.isArray(v) ? [] : [show(v)]
  })
  return [...new Set(texts)].slice(0, 5).join(", ")
}

const analyze = (root: unknown): Shape | undefined => {
  let leaves = 0
  let visits = 0
  const shape = (
    s: unknown,
    label: string,
    depth: number,
    path: ReadonlySet<string>,
    element: boolean,
  ): Shape | undefined => {
    if (++visits > MAX_VISITS) throw new Abort("The schema is too large to map automatically.")
    const refs = refsOf(s)
    if (refs.some((r) => path.has(r))) return undefined // a recursive $ref: stop here
    const inner = refs.length === 0 ? path : new Set([...path, ...refs])
    const kind = classify(root, s)
    if (kind === "scalar") {
      if (++leaves > MAX_MAPPED_FIELDS)
        throw new Abort(
          `The schema has more than ${MAX_MAPPED_FIELDS} fields to map; automatic mapping supports at most ${MAX_MAPPED_FIELDS}.`,
        )
      return { kind: "scalar", schema: s }
    }
    if (kind === "none" || depth > MAX_DEPTH) return undefined
    if (kind === "object") {
      const fields = Object.entries(propertiesOf(root, s)).flatMap(([key, p]): Array<Field> => {
        const l = labelOf(root, key, p)
        const sub = shape(p, l, depth + 1, inner, false)
        return sub === undefined ? [] : [{ key, label: l, shape: sub }]
      })
      return fields.length === 0 ? undefined : { kind: "object", fields }
    }
    if (element) return undefined // arrays of arrays, arrays of keyed objects…
    const over = kind === "array" ? "array" : "keyed"
    const of = over === "array" ? itemsOf(root, s) : additionalPropertiesOf(root, s)
    const items = shape(of, label, depth + 1, inner, true)
    if (items === undefined || items.kind === "collection") return undefined
    const labels =
      over === "array" ? { dimension: singularize(label), element: singularize(label) } : keyedLabels(label)
    const description =
      keywordOf(root, s, "description") ?? keywordOf(root, of, "description") ?? keywordOf(root, of, "title")
    const examples =
      over === "array"
        ? examplesOf(root, of)
        : examplesOf(root, s).flatMap((e) => (isRecord(e) ? Object.keys(e) : []))
    const perDocument =
      over === "array" &&
      items.kind === "object" &&
      (keywordOf(root, s, DIMENSION_KEYWORD) === DOCUMENT_DIMENSION_NAME ||
        /^(documents?|files?)$/i.test(label) ||
        PER_DOCUMENT.test(description ?? ""))
    return { kind: "collection", over, ...labels, description, examples, items, perDocument }
  }
  return shape(root, "", 0, new Set(), false)
}

// ---- agents' texts ----------------------------------------------------------------------------------------

const CURRENCY =
  /\b(USD|EUR|GBP|JPY|CHF|CAD|AUD|NZD|CNY|INR|SEK|NOK|DKK|PLN|CZK|HUF|BRL|MXN|ZAR|SGD|HKD|KRW|TRY)\b/
const URI_FORMATS = new Set(["uri", "url", "iri", "uri-reference", "iri-reference"])

interface AgentText {
  readonly extraction_instructions: string
  readonly value_type: "string" | "number"
  readonly unit: string
  readonly examples: string
  readonly resolution_instructions: string
}

/**
 * The texts of the agent filling the scalar position `s`. `lead` is the generated first sentence, used when
 * the position has no `description`.
 */
const agentText = (root: unknown, s: unknown, label: string, lead: string): AgentText => {
  const types = schemaTypes(root, s)
  const numeric = types.length > 0 && types.every((t) => t === "number" || t === "integer")
  const description = keywordOf(root, s, "description")?.trim()
  const mentions = [description, keywordOf(root, s, "title"), label].join(" ")
  const unit = !numeric
    ? ""
    : (CURRENCY.exec(mentions)?.[1] ?? (/%|\bper ?cent(age)?\b/i.test(mentions) ? "%" : ""))
  const values = enumOf(root, s)?.filter((v) => v !== null)
  const oneOf =
    values !== undefined && values.length > 0 ? `Answer with one of: ${values.map(show).join(", ")}.` : ""
  const format = keywordOf(root, s, "format")
  const form =
    oneOf !== ""
      ? oneOf
      : types.length === 1 && types[0] === "boolean"
        ? "Answer yes or no."
        : numeric
          ? `Answer with ${types.every((t) => t === "integer") ? "a whole number" : "a number"}${unit === "" ? "" : unit === "%" ? " (a percentage)" : ` in ${unit}`}.`
          : format === "date"
            ? "Answer as a date (YYYY-MM-DD)."
            : format === "date-time"
              ? "Answer as a date and time in ISO 8601 (YYYY-MM-DDTHH:MM:SS)."
              : format === "time"
                ? "Answer as a time (HH:MM:SS)."
                : format === "email"
                  ? "Answer with an e-mail address."
                  : format !== undefined && URI_FORMATS.has(format)
                    ? "Answer with a URI (web address)."
                    : ""
  const examples = examplesOf(root, s)
  return {
    extraction_instructions: [description ? sentence(description) : lead, form]
      .filter((x) => x !== "")
      .join(" "),
    value_type: numeric ? "number" : "string",
    unit,
    examples: (examples.length > 0 ? examples : (values ?? [])).map(show).join(", "),
    resolution_instructions: oneOf,
  }
}

const forEach = (dimensions: ReadonlyArray<string>) =>
  dimensions.length === 0 ? "" : ` for each ${dimensions.map(prose).join(" and each ")}`

// ---- the property naming each item -------------------------------------------------------------------------

type Collection = Extract<Shape, { kind: "collection" }>

/** The system dimension with one value (the file name) per document. */
export const DOCUMENT_DIMENSION_NAME = "Document"
/** `"x-dxs-dimension": "Document"` on an array of objects makes it one item per document. */
export const DIMENSION_KEYWORD = "x-dxs-dimension"
/** A collection's description that says it has one element per document or file. */
const PER_DOCUMENT = /\b(each|every|per|one for each|one per)\s+(uploaded\s+)?(document|file)\b/i
/** Item properties that hold a document's file name. */
const FILE_NAME = /^(file_?name|file|document|document_?name|name)$/i

const GENERIC_NAMES = new Set(["name", "label", "key", "id"])

/** A text position: a string (nullable or not, with or without an enum) or untyped. */
const isText = (root: unknown, s: unknown) => schemaTypes(root, s).every((t) => t === "string")

/**
 * The property of an item object that holds the item's dimension value (the collection's dimension is named
 * `name`): the first text property whose key or label is, case-insensitively, the dimension's name or its
 * singular or the collection's label; else, when no property at all has such a name, the first text property
 * named `name`, `label`, `key` or `id`. `byDocument` (items per document): the first text property named like
 * a file name (`file_name`, `file`, `document`, `document_name`, `name`). None when the item has no other
 * field, whose values it would need.
 */
const namingField = (root: unknown, c: Collection, name: string, byDocument = false): Field | undefined => {
  if (c.items.kind !== "object" || c.items.fields.length < 2) return undefined
  const fields = c.items.fields
  if (byDocument)
    return fields.find(
      (f) =>
        f.shape.kind === "scalar" && isText(root, f.shape.schema) && FILE_NAME.test(f.key.replace(/-/g, "_")),
    )
  const lower = (s: string) => s.toLowerCase()
  const own = new Set([name, singularize(name), c.dimension, singularize(c.dimension)].map(lower))
  const named = (f: Field, names: ReadonlySet<string>) => names.has(lower(f.key)) || names.has(lower(f.label))
  const text = fields.filter((f) => f.shape.kind === "scalar" && isText(root, f.shape.schema))
  return (
    text.find((f) => named(f, own)) ??
    (fields.some((f) => named(f, own)) ? undefined : text.find((f) => named(f, GENERIC_NAMES)))
  )
}

/** The planned dimension's description: the schema's, or a generated one; and which property names items. */
const describe = (c: Collection, naming: Field | undefined): string => {
  const each = prose(c.dimension)
  if (naming === undefined) return c.description ?? `Each ${each} in the document.`
  if (c.description === undefined) return `Each ${each} in the document (its name goes in "${naming.key}").`
  return `${sentence(c.description)} Each ${each}'s name goes in "${naming.key}".`
}

// ---- planning -----------------------------------------------------------------------------------------------

interface Scope {
  /** Labels the agent names start with (enclosing objects, and dimensions instead of arrays). */
  readonly prefix: ReadonlyArray<string>
  /** Labels of the enclosing objects since the innermost dimension ("of the seller"). */
  readonly context: ReadonlyArray<string>
  /** Names of the dimensions bound by enclosing nodes, outermost first, and their labels ("for each …"). */
  readonly dimensions: ReadonlyArray<string>
  readonly each: ReadonlyArray<string>
  readonly path: string
}

const child = (path: string, segment: string) => (path === "" ? segment : `${path}/${segment}`)
const escapeSegment = (name: string) => name.replace(/~/g, "~0").replace(/\//g, "~1")

/**
 * Plans the agents and dimensions to create and the mapping filling `schema` from them and from `existing`
 * ones, which are reused when they match (an agent: same name, dimensions and value type; a dimension: a
 * CUSTOM one with the name, case-insensitively). See the module comment.
 */
export const planAutoMapping = (
  schema: unknown,
  existing: {
    readonly agents: ReadonlyArray<ExistingAgent>
    readonly dimensions: ReadonlyArray<ExistingDimension>
  },
): AutoMappingPlan => {
  if (classify(schema, schema) !== "object")
    return { ok: false, error: "The schema's root must be an object schema with properties." }
  let shape: Shape | undefined
  try {
    shape = analyze(schema)
  } catch (e) {
    if (e instanceof Abort) return { ok: false, error: e.error }
    throw e
  }
  if (shape === undefined || shape.kind !== "object")
    return { ok: false, error: "No field of the schema can be mapped." }

  const dimensions: Array<PlannedDimension> = []
  const agents: Array<PlannedAgent> = []
  const usedDimensions = new Set<string>(["document"])
  const reserved = new Set(
    existing.dimensions.filter((d) => d.source !== "CUSTOM").map((d) => d.name.toLowerCase()),
  )
  const custom = new Map<string, string>()
  for (const d of existing.dimensions)
    if (d.source === "CUSTOM" && !custom.has(d.name.toLowerCase())) custom.set(d.name.toLowerCase(), d.name)
  const usedAgents = new Set<string>()
  const existingAgentNames = new Set(existing.agents.map((a) => a.name.toLowerCase()))

  /** The dimension a collection iterates, and the property of its items that takes the dimension's value. */
  const documentDimension = existing.dimensions.find((d) => d.source === "DOCUMENT")?.name
  const dimension = (
    c: Collection,
    bound: ReadonlyArray<string>,
  ): { readonly name: string; readonly naming: Field | undefined } => {
    if (c.perDocument && documentDimension !== undefined && !bound.includes(documentDimension))
      return { name: documentDimension, naming: namingField(schema, c, documentDimension, true) }
    for (let n = 1; ; n++) {
      const name = n === 1 ? clip(c.dimension) : clip(c.dimension, ` ${n}`)
      const key = name.toLowerCase()
      if (usedDimensions.has(key) || reserved.has(key)) continue
      usedDimensions.add(key)
      const reused = custom.get(key)
      const naming = namingField(schema, c, reused ?? name)
      if (reused !== undefined) return { name: reused, naming }
      dimensions.push({
        name,
        description: describe(c, naming),
        example_values: exampleValues(c.examples, naming?.key),
      })
      return { name, naming }
    }
  }

  const agent = (s: unknown, labels: ReadonlyArray<string>, lead: string, scope: Scope): MappingNode => {
    const text = agentText(schema, s, labels[labels.length - 1]!, lead)
    const base = joinLabels(labels)
    const sorted = (names: ReadonlyArray<string>) => JSON.stringify([...names].sort())
    const sameSet = (names: ReadonlyArray<string>) => sorted(names) === sorted(scope.dimensions)
    for (let n = 1; ; n++) {
      const name = n === 1 ? clip(base) : clip(base, ` (${n})`)
      const key = name.toLowerCase()
      if (usedAgents.has(key)) continue
      const same = existing.agents.filter((a) => a.name === name)
      const reusable =
        same.length === 1 && same[0]!.value_type === text.value_type && sameSet(same[0]!.dimensions)
      if (!reusable && existingAgentNames.has(key)) continue
      usedAgents.add(key)
      if (!reusable) agents.push({ name, ...text, dimensions: scope.dimensions, path: scope.path })
      return { kind: "scalar_from_agent", agent_name: name }
    }
  }

  /** An object node; `naming` is the property that takes the value of the innermost dimension. */
  const object = (fields: ReadonlyArray<Field>, scope: Scope, naming?: Field): MappingNode => ({
    kind: "object",
    properties: Object.fromEntries(
      fields.map((f) => [
        f.key,
        f === naming
          ? { kind: "dimension_value", dimension_name: scope.dimensions[scope.dimensions.length - 1]! }
          : field(f, scope),
      ]),
    ),
  })

  const field = (f: Field, scope: Scope): MappingNode => {
    const path = child(scope.path, escapeSegment(f.key))
    const of = scope.context.length === 0 ? "" : ` of the ${prose(scope.context.join(" "))}`
    switch (f.shape.kind) {
      case "scalar": {
        const lead = `Extract the ${prose(f.label)}${of}${forEach(scope.each)}.`
        return agent(f.shape.schema, [...scope.prefix, f.label], lead, { ...scope, path })
      }
      case "object":
        return object(f.shape.fields, {
          ...scope,
          prefix: [...scope.prefix, f.label],
          context: [...scope.context, f.label],
          path,
        })
      case "collection": {
        const c = f.shape
        const { name, naming } = dimension(c, scope.dimensions)
        const inner: Scope = {
          prefix: [...scope.prefix, c.dimension],
          context: [],
          dimensions: [...scope.dimensions, name],
          each: [...scope.each, c.dimension],
          path: child(path, c.over === "array" ? "[*]" : "{*}"),
        }
        const element = prose(c.element)
        const lead =
          c.over === "array"
            ? `Extract the ${element}${of} itself, as written in the document${forEach(scope.each).replace(/^ /, ", ")}.`
            : `Extract the ${element}${of}${forEach(inner.each)}.`
        const items =
          c.items.kind === "object"
            ? object(c.items.fields, inner, naming)
            : agent(c.items.schema, [...scope.prefix, c.element], lead, inner)
        return c.over === "array"
          ? { kind: "array_from_dimension", dimension_name: name, items }
          : { kind: "object_from_dimension", dimension_name: name, values: items }
      }
    }
  }

  const mapping = object(shape.fields, { prefix: [], context: [], dimensions: [], each: [], path: "" })
  return { ok: true, dimensions, agents, mapping }
}
