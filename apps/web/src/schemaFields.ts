/**
 * The output schema as a list of fields, for the schema form: a JSON Schema (an object at the root, whose
 * properties are scalars, objects, or arrays of scalars or objects) to fields and back, and the fields'
 * agents and dimensions to a mapping and back. Pure: no I/O, no React.
 *
 * A schema or mapping using more than this (`$ref`, `anyOf`, `enum`, several types, pinned dimension
 * values…) is reported as not editable by the form, so the form never drops what it cannot show.
 */

export const SCALAR_TYPES = ["string", "number", "integer", "boolean"] as const
export const FIELD_TYPES = [...SCALAR_TYPES, "object", "array"] as const
export type ScalarType = (typeof SCALAR_TYPES)[number]
export type FieldType = (typeof FIELD_TYPES)[number]
export type ItemType = ScalarType | "object"

export interface SchemaField {
  /** A key for the form's rows (not part of the schema). */
  readonly id: string
  readonly name: string
  readonly type: FieldType
  readonly description: string
  readonly required: boolean
  /** Of an object, or of the objects of an array whose `itemType` is `object`. */
  readonly children: ReadonlyArray<SchemaField>
  /** The type of an array's items. */
  readonly itemType: ItemType
  /** The agent whose value fills a scalar field (or each scalar item of an array); "" when none. */
  readonly agent: string
  /** The dimension an array iterates (one item per value); "" when none. */
  readonly dimension: string
}

export type Outcome<A> =
  | { readonly ok: true; readonly value: A }
  | { readonly ok: false; readonly reason: string }

const ok = <A>(value: A): Outcome<A> => ({ ok: true, value })
const fail = <A>(reason: string): Outcome<A> => ({ ok: false, reason })

let nextId = 0
/** A fresh row key. */
export const fieldId = (): string => `f${++nextId}`

/** A new, empty field of `type`. */
export const newField = (type: FieldType = "string"): SchemaField => ({
  id: fieldId(),
  name: "",
  type,
  description: "",
  required: false,
  children: [],
  itemType: "string",
  agent: "",
  dimension: "",
})

const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** Whether the field's value (or an array's items) are objects with fields of their own. */
export const hasChildren = (f: SchemaField): boolean =>
  f.type === "object" || (f.type === "array" && f.itemType === "object")

/** Whether the field (or each item of an array field) takes an agent's value. */
export const takesAgent = (f: SchemaField): boolean =>
  f.type !== "object" && !(f.type === "array" && f.itemType === "object")

// ---------------------------------------------------------------------------------------------------------
// fields → schema

const objectSchema = (fields: ReadonlyArray<SchemaField>): Record<string, unknown> => {
  const properties: Record<string, unknown> = {}
  const required: Array<string> = []
  for (const f of fields) {
    if (f.name === "") continue
    properties[f.name] = fieldSchema(f)
    if (f.required) required.push(f.name)
  }
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}) }
}

const describe = (f: SchemaField) => (f.description.trim() === "" ? {} : { description: f.description })

const fieldSchema = (f: SchemaField): Record<string, unknown> => {
  if (f.type === "object") {
    const { type, ...rest } = objectSchema(f.children)
    return { type, ...describe(f), ...rest }
  }
  if (f.type === "array")
    return {
      type: "array",
      ...describe(f),
      items: f.itemType === "object" ? objectSchema(f.children) : { type: f.itemType },
    }
  return { type: f.type, ...describe(f) }
}

/**
 * The JSON Schema of the fields (fields without a name are left out), with `root`'s keywords (`$schema`,
 * `title`, `description`, `additionalProperties` of the root, kept from the schema the fields came from).
 */
export const fieldsToSchema = (
  fields: ReadonlyArray<SchemaField>,
  root: Readonly<Record<string, unknown>> = {},
): Record<string, unknown> => {
  const { $schema, ...rest } = root
  return { ...($schema === undefined ? {} : { $schema }), ...objectSchema(fields), ...rest }
}

// ---------------------------------------------------------------------------------------------------------
// schema → fields

const ROOT_KEYS = new Set([
  "$schema",
  "type",
  "properties",
  "required",
  "additionalProperties",
  "title",
  "description",
])
const OBJECT_KEYS = new Set(["type", "properties", "required", "description"])
const ARRAY_KEYS = new Set(["type", "items", "description"])
const SCALAR_KEYS = new Set(["type", "description"])

const at = (path: string): string => (path === "" ? "the root" : `"${path}"`)

const unknownKey = (node: Record<string, unknown>, allowed: ReadonlySet<string>): string | undefined =>
  Object.keys(node).find((k) => !allowed.has(k))

const propertiesOf = (node: Record<string, unknown>, path: string): Outcome<ReadonlyArray<SchemaField>> => {
  const properties = node.properties ?? {}
  if (!isRecord(properties)) return fail(`The properties at ${at(path)} are not an object.`)
  const required = node.required ?? []
  if (!Array.isArray(required) || !required.every((r) => typeof r === "string"))
    return fail(`"required" at ${at(path)} is not a list of names.`)
  const fields: Array<SchemaField> = []
  for (const [name, sub] of Object.entries(properties)) {
    const field = fieldOf(name, sub, path === "" ? name : `${path}/${name}`, required.includes(name))
    if (!field.ok) return field
    fields.push(field.value)
  }
  return ok(fields)
}

const fieldOf = (name: string, node: unknown, path: string, required: boolean): Outcome<SchemaField> => {
  if (!isRecord(node)) return fail(`The field ${at(path)} is not a schema object.`)
  const type = node.type
  if (typeof type !== "string" || !(FIELD_TYPES as ReadonlyArray<string>).includes(type))
    return fail(`The field ${at(path)} has no single type of ${FIELD_TYPES.join(", ")}.`)
  const description = node.description ?? ""
  if (typeof description !== "string") return fail(`The description of ${at(path)} is not text.`)
  const base = { ...newField(type as FieldType), name, description, required }
  const allowed = type === "object" ? OBJECT_KEYS : type === "array" ? ARRAY_KEYS : SCALAR_KEYS
  const extra = unknownKey(node, allowed)
  if (extra !== undefined) return fail(`The field ${at(path)} uses "${extra}", which the form does not edit.`)
  if (type === "object") {
    const children = propertiesOf(node, path)
    return children.ok ? ok({ ...base, children: children.value }) : children
  }
  if (type === "array") {
    const items = node.items
    const itemsPath = `${path}/[*]`
    if (!isRecord(items)) return fail(`The items of ${at(path)} are not one schema object.`)
    const itemType = items.type
    if (itemType === "object") {
      const extraItem = unknownKey(items, OBJECT_KEYS)
      if (extraItem !== undefined)
        return fail(`The items of ${at(path)} use "${extraItem}", which the form does not edit.`)
      const children = propertiesOf(items, itemsPath)
      return children.ok ? ok({ ...base, itemType: "object", children: children.value }) : children
    }
    if (typeof itemType !== "string" || !(SCALAR_TYPES as ReadonlyArray<string>).includes(itemType))
      return fail(`The items of ${at(path)} are neither objects nor one of ${SCALAR_TYPES.join(", ")}.`)
    const extraItem = unknownKey(items, SCALAR_KEYS)
    if (extraItem !== undefined)
      return fail(`The items of ${at(path)} use "${extraItem}", which the form does not edit.`)
    return ok({ ...base, itemType: itemType as ScalarType })
  }
  return ok(base)
}

export interface SchemaForm {
  readonly fields: ReadonlyArray<SchemaField>
  /** The root's other keywords, given back to `fieldsToSchema`. */
  readonly root: Readonly<Record<string, unknown>>
}

/** The fields of a schema, or why the form cannot edit it. */
export const schemaToFields = (schema: unknown): Outcome<SchemaForm> => {
  if (!isRecord(schema) || schema.type !== "object") return fail("The schema's root is not an object schema.")
  const extra = unknownKey(schema, ROOT_KEYS)
  if (extra !== undefined)
    return fail(`The schema uses "${extra}" at the root, which the form does not edit.`)
  if (typeof schema.additionalProperties !== "boolean" && schema.additionalProperties !== undefined)
    return fail('The schema describes "additionalProperties", which the form does not edit.')
  const fields = propertiesOf(schema, "")
  if (!fields.ok) return fields
  const { type: _type, properties: _properties, required: _required, ...root } = schema
  return ok({ fields: fields.value, root })
}

// ---------------------------------------------------------------------------------------------------------
// fields ⇄ mapping

type Node = Record<string, unknown>

const itemMapping = (f: SchemaField): Node | undefined => {
  if (f.itemType === "object") return objectMapping(f.children)
  return f.agent === "" ? undefined : { kind: "scalar_from_agent", agent_name: f.agent }
}

const fieldMapping = (f: SchemaField): Node | undefined => {
  if (f.type === "object") return objectMapping(f.children)
  if (f.type === "array") {
    if (f.dimension === "") return undefined
    const items = itemMapping(f)
    return items === undefined
      ? undefined
      : { kind: "array_from_dimension", dimension_name: f.dimension, items }
  }
  return f.agent === "" ? undefined : { kind: "scalar_from_agent", agent_name: f.agent }
}

const objectMapping = (fields: ReadonlyArray<SchemaField>): Node | undefined => {
  const properties: Record<string, Node> = {}
  for (const f of fields) {
    if (f.name === "") continue
    const m = fieldMapping(f)
    if (m !== undefined) properties[f.name] = m
  }
  return Object.keys(properties).length === 0 ? undefined : { kind: "object", properties }
}

/** The mapping of the fields' agents and dimensions; null when nothing is mapped. */
export const fieldsToMapping = (fields: ReadonlyArray<SchemaField>): Node | null =>
  objectMapping(fields) ?? null

const applyObject = (
  fields: ReadonlyArray<SchemaField>,
  node: unknown,
  path: string,
): Outcome<ReadonlyArray<SchemaField>> => {
  if (!isRecord(node) || node.kind !== "object" || !isRecord(node.properties))
    return fail(`The mapping at ${at(path)} is not an object node.`)
  const properties = node.properties
  const known = new Set(fields.map((f) => f.name))
  const stray = Object.keys(properties).find((k) => !known.has(k))
  if (stray !== undefined)
    return fail(`The mapping names "${stray}" at ${at(path)}, which the schema does not have.`)
  const out: Array<SchemaField> = []
  for (const f of fields) {
    const sub = properties[f.name]
    const applied = applyField(f, sub, path === "" ? f.name : `${path}/${f.name}`)
    if (!applied.ok) return applied
    out.push(applied.value)
  }
  return ok(out)
}

const scalarAgent = (node: unknown, path: string): Outcome<string> => {
  if (!isRecord(node) || node.kind !== "scalar_from_agent" || typeof node.agent_name !== "string")
    return fail(`The mapping at ${at(path)} is not a scalar_from_agent node.`)
  if (
    node.dimension_values !== undefined &&
    !(isRecord(node.dimension_values) && Object.keys(node.dimension_values).length === 0)
  )
    return fail(`The mapping at ${at(path)} pins dimension values, which the form does not edit.`)
  return ok(node.agent_name)
}

const applyField = (f: SchemaField, node: unknown, path: string): Outcome<SchemaField> => {
  const cleared = { ...f, agent: "", dimension: "" }
  if (node === undefined) {
    if (!hasChildren(f)) return ok(cleared)
    const children = applyObject(f.children, { kind: "object", properties: {} }, path)
    return children.ok ? ok({ ...cleared, children: children.value }) : children
  }
  if (f.type === "object") {
    const children = applyObject(f.children, node, path)
    return children.ok ? ok({ ...cleared, children: children.value }) : children
  }
  if (f.type === "array") {
    if (!isRecord(node) || node.kind !== "array_from_dimension" || typeof node.dimension_name !== "string")
      return fail(`The mapping at ${at(path)} is not an array_from_dimension node.`)
    const itemsPath = `${path}/[*]`
    if (f.itemType === "object") {
      const children = applyObject(f.children, node.items, itemsPath)
      return children.ok
        ? ok({ ...cleared, dimension: node.dimension_name, children: children.value })
        : children
    }
    const agent = scalarAgent(node.items, itemsPath)
    return agent.ok ? ok({ ...cleared, dimension: node.dimension_name, agent: agent.value }) : agent
  }
  const agent = scalarAgent(node, path)
  return agent.ok ? ok({ ...cleared, agent: agent.value }) : agent
}

/**
 * The fields with the agents and dimensions of `mapping` (null: none), or why the form cannot show that
 * mapping (kinds it does not edit, names the schema does not have).
 */
export const mappingIntoFields = (
  fields: ReadonlyArray<SchemaField>,
  mapping: unknown,
): Outcome<ReadonlyArray<SchemaField>> =>
  mapping === null || mapping === undefined
    ? applyObject(fields, { kind: "object", properties: {} }, "")
    : applyObject(fields, mapping, "")

// ---------------------------------------------------------------------------------------------------------
// paths

/** A diagnostic's path for a field: names joined by `/`, `[*]` for the items of an array. */
export const childPath = (parent: string, field: SchemaField, parentIsArray: boolean): string => {
  const base = parentIsArray ? (parent === "" ? "[*]" : `${parent}/[*]`) : parent
  const name = field.name.replaceAll("~", "~0").replaceAll("/", "~1")
  return base === "" ? name : `${base}/${name}`
}
