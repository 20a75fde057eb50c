/**
 * Reading a JSON Schema (Draft 2020-12) position the way output mapping needs it: local `$ref`s
 * followed, `allOf` members merged, the nullable pattern (`type: [T, "null"]`, or `anyOf`/`oneOf` with one
 * non-null branch) unwrapped. Pure; the schema is assumed to be valid (Ajv checks it before it is stored).
 */

export type JsonType = "object" | "array" | "string" | "number" | "integer" | "boolean" | "null"

/** A schema position with its `$ref`s followed; `true`/`{}` accept anything, `false` nothing. */
export type SchemaNode = Readonly<Record<string, unknown>> | boolean

const isRecord = (x: unknown): x is Readonly<Record<string, unknown>> =>
  typeof x === "object" && x !== null && !Array.isArray(x)

const unescapePointer = (segment: string): string => segment.replace(/~1/g, "/").replace(/~0/g, "~")

/** Follows a local JSON-pointer `$ref` (`#/$defs/Item`) inside `root`; an unresolvable ref reads as `{}`. */
export const deref = (root: unknown, schema: unknown): SchemaNode => {
  let node: unknown = schema
  const seen = new Set<unknown>()
  while (isRecord(node) && typeof node.$ref === "string" && !seen.has(node)) {
    seen.add(node)
    const ref = node.$ref
    if (!ref.startsWith("#")) return {}
    let target: unknown = root
    for (const raw of ref.slice(1).split("/").slice(1)) {
      const key = unescapePointer(decodeURIComponent(raw))
      target = Array.isArray(target) ? target[Number(key)] : isRecord(target) ? target[key] : undefined
    }
    if (target === undefined) return {}
    // Sibling keywords of a `$ref` (2020-12 allows them) are kept over the target's.
    const { $ref: _ref, ...siblings } = node
    node = isRecord(target) && Object.keys(siblings).length > 0 ? { ...target, ...siblings } : target
  }
  return typeof node === "boolean" ? node : isRecord(node) ? node : {}
}

const typesOf = (node: SchemaNode): Array<JsonType> | undefined => {
  if (typeof node === "boolean") return undefined
  const t = node.type
  if (typeof t === "string") return [t as JsonType]
  if (Array.isArray(t)) return t.filter((x): x is JsonType => typeof x === "string")
  return undefined
}

const isNullOnly = (root: unknown, branch: unknown): boolean => {
  const node = deref(root, branch)
  const types = typesOf(node)
  if (types !== undefined) return types.length === 1 && types[0] === "null"
  return typeof node !== "boolean" && "const" in node && node.const === null
}

/**
 * The position's schema with the nullable pattern removed: `{ schema, nullable }`. `allOf` members'
 * keywords are merged into the result (their `properties` and `required` combined).
 */
export const unwrap = (
  root: unknown,
  schema: unknown,
): { readonly schema: SchemaNode; readonly nullable: boolean } => {
  let node = deref(root, schema)
  let nullable = false
  for (let depth = 0; depth < 8 && typeof node !== "boolean"; depth++) {
    const branches = Array.isArray(node.anyOf)
      ? node.anyOf
      : Array.isArray(node.oneOf)
        ? node.oneOf
        : undefined
    if (branches === undefined) break
    const rest = branches.filter((b) => !isNullOnly(root, b))
    if (rest.length === branches.length || rest.length !== 1) break
    nullable = true
    const { anyOf: _a, oneOf: _o, ...outer } = node
    const inner = deref(root, rest[0])
    node = typeof inner === "boolean" ? inner : { ...outer, ...inner }
  }
  if (typeof node !== "boolean" && Array.isArray(node.allOf)) node = mergeAllOf(root, node)
  const types = typesOf(node)
  if (types?.includes("null") && types.length > 1 && typeof node !== "boolean") {
    nullable = true
    node = { ...node, type: types.filter((t) => t !== "null") }
  }
  return { schema: node, nullable }
}

const mergeAllOf = (root: unknown, node: Readonly<Record<string, unknown>>): SchemaNode => {
  const { allOf, ...outer } = node
  let merged: Record<string, unknown> = { ...outer }
  for (const member of allOf as ReadonlyArray<unknown>) {
    const m = unwrap(root, member).schema
    if (m === false) return false
    if (m === true) continue
    const properties = { ...(isRecord(merged.properties) ? merged.properties : {}) }
    if (isRecord(m.properties)) Object.assign(properties, m.properties)
    const required = [
      ...(Array.isArray(merged.required) ? merged.required : []),
      ...(Array.isArray(m.required) ? m.required : []),
    ]
    merged = { ...m, ...merged, properties, required: [...new Set(required)] }
  }
  return merged
}

/**
 * The JSON types a position accepts besides `null` (see `unwrap`). An untyped position infers its type
 * from `properties`/`items`/`enum`/`const`; an empty list means "anything".
 */
export const schemaTypes = (root: unknown, schema: unknown): ReadonlyArray<JsonType> => {
  const { schema: node } = unwrap(root, schema)
  if (typeof node === "boolean") return []
  const declared = typesOf(node)
  if (declared !== undefined) return declared.filter((t) => t !== "null")
  if (isRecord(node.properties) || node.additionalProperties !== undefined) return ["object"]
  if (node.items !== undefined || node.prefixItems !== undefined) return ["array"]
  const values = enumOf(root, schema)
  if (values !== undefined) {
    const kinds = new Set<JsonType>()
    for (const v of values) {
      if (v === null) continue
      kinds.add(
        typeof v === "string"
          ? "string"
          : typeof v === "number"
            ? Number.isInteger(v)
              ? "integer"
              : "number"
            : typeof v === "boolean"
              ? "boolean"
              : Array.isArray(v)
                ? "array"
                : "object",
      )
    }
    return [...kinds]
  }
  return []
}

/** True when the position accepts `null`. */
export const isNullable = (root: unknown, schema: unknown): boolean => {
  const { schema: node, nullable } = unwrap(root, schema)
  if (nullable || node === true) return true
  if (node === false) return false
  const declared = typesOf(node)
  if (declared === undefined) {
    const values = enumOf(root, schema)
    return values === undefined
      ? !isRecord(node.properties) && node.items === undefined
      : values.includes(null)
  }
  return declared.includes("null")
}

/** `properties` of an object position (empty when none). */
export const propertiesOf = (root: unknown, schema: unknown): Readonly<Record<string, unknown>> => {
  const { schema: node } = unwrap(root, schema)
  return typeof node !== "boolean" && isRecord(node.properties) ? node.properties : {}
}

/** `required` of an object position. */
export const requiredOf = (root: unknown, schema: unknown): ReadonlyArray<string> => {
  const { schema: node } = unwrap(root, schema)
  return typeof node !== "boolean" && Array.isArray(node.required)
    ? node.required.filter((r): r is string => typeof r === "string")
    : []
}

/** The item schema of an array position (`items`; `{}` when absent). */
export const itemsOf = (root: unknown, schema: unknown): unknown => {
  const { schema: node } = unwrap(root, schema)
  if (typeof node === "boolean") return node
  return node.items === undefined ? {} : node.items
}

/**
 * The schema of the values of an object position's other keys: `additionalProperties` (a schema,
 * `false` when no other key is allowed), or `unevaluatedProperties`, else `true` (anything).
 */
export const additionalPropertiesOf = (root: unknown, schema: unknown): unknown => {
  const { schema: node } = unwrap(root, schema)
  if (typeof node === "boolean") return node
  if (node.additionalProperties !== undefined) return node.additionalProperties
  if (node.unevaluatedProperties !== undefined) return node.unevaluatedProperties
  return true
}

/** The allowed values of a position (`enum`, or `[const]`), if it restricts them. */
export const enumOf = (root: unknown, schema: unknown): ReadonlyArray<unknown> | undefined => {
  const { schema: node } = unwrap(root, schema)
  if (typeof node === "boolean") return undefined
  if (Array.isArray(node.enum)) return node.enum
  if ("const" in node) return [node.const]
  return undefined
}

/** A string keyword of a position (`description`, `title`, `format`, …), if present. */
export const keywordOf = (root: unknown, schema: unknown, keyword: string): string | undefined => {
  const { schema: node } = unwrap(root, schema)
  if (typeof node === "boolean") return undefined
  const value = node[keyword]
  return typeof value === "string" ? value : undefined
}

/** `examples` of a position, if present. */
export const examplesOf = (root: unknown, schema: unknown): ReadonlyArray<unknown> => {
  const { schema: node } = unwrap(root, schema)
  return typeof node !== "boolean" && Array.isArray(node.examples) ? node.examples : []
}

/**
 * The schema position at a mapping path (`seller/name`, `line_items/[*]/amount`, `totals/{*}`; segments
 * escaped like JSON Pointer), or undefined when the schema has no such position.
 */
export const schemaAt = (root: unknown, path: string): unknown => {
  let position: unknown = root
  if (path === "") return position
  for (const raw of path.split("/")) {
    if (raw === "[*]") position = itemsOf(root, position)
    else if (raw === "{*}") {
      const values = additionalPropertiesOf(root, position)
      position = values === true ? {} : values
    } else position = propertiesOf(root, position)[unescapePointer(raw)]
    if (position === undefined || position === false) return undefined
  }
  return position
}

/**
 * Checks a value against the schema at a position (a subschema of the root, `true`/`false`, or `{}`):
 * the problems found, none when the value validates.
 */
export type PositionCheck = (position: unknown, value: unknown) => ReadonlyArray<string>

/** Checks a value against one compiled subschema: the problems found, none when it validates. */
export type ValueCheck = (value: unknown) => ReadonlyArray<string>

const escapePointer = (segment: string): string => segment.replace(/~/g, "~0").replace(/\//g, "~1")

/** The JSON Pointer (RFC 6901) of every object and array inside `root`, by identity (the first path found). */
export const schemaPointers = (root: unknown): ReadonlyMap<object, string> => {
  const pointers = new Map<object, string>()
  const visit = (node: unknown, pointer: string) => {
    if (typeof node !== "object" || node === null || pointers.has(node)) return
    pointers.set(node, pointer)
    // an array's entries are its indices
    for (const [key, value] of Object.entries(node)) visit(value, `${pointer}/${escapePointer(key)}`)
  }
  visit(root, "")
  return pointers
}

/**
 * A `PositionCheck` for positions inside `root`: a position is found by identity and checked with
 * `compileAt(pointer)` (a JSON Schema validator, compiled once per pointer). A position that is not part of
 * `root` (only `{}` arises while rendering) accepts anything; `false` accepts nothing.
 */
export const positionCheck = (root: unknown, compileAt: (pointer: string) => ValueCheck): PositionCheck => {
  const pointers = schemaPointers(root)
  const compiled = new Map<string, ValueCheck>()
  return (position, value) => {
    if (position === false) return ["no value is allowed here"]
    if (typeof position !== "object" || position === null) return []
    const pointer = pointers.get(position)
    if (pointer === undefined) return []
    let check = compiled.get(pointer)
    if (check === undefined) {
      check = compileAt(pointer)
      compiled.set(pointer, check)
    }
    return check(value)
  }
}

/** The check used without a validator: only whether the position accepts `null` (see `isNullable`). */
export const nullCheck =
  (root: unknown): PositionCheck =>
  (position, value) =>
    value === null && !isNullable(root, position) ? ["must not be null"] : []
