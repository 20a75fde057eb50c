/**
 * Schema-shaped results validate against their schema: random schemas (objects, arrays and dimension-keyed
 * objects over dimensions, scalars with `required`, null allowed or not, enums, patterns, formats, minimums,
 * `minItems`, `additionalProperties: false`) with mappings built to match them, random found, refused and
 * missing values and random `value_if_not_found`s. Every rendering either validates (Ajv, Draft 2020-12 with
 * formats), enriched or not, or says that it cannot and why (`valid: false`, `_missing`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import * as fc from "fast-check"
import { positionCheck } from "./JsonSchema.ts"
import {
  type LeafLookup,
  type LeafResult,
  type MappingAgent,
  type MappingContext,
  type MappingNode,
  MISSING_KEY,
  renderSchema,
} from "./OutputMapping.ts"

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020

const makeAjv = () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats(ajv)
  return ajv
}

/** A `PositionCheck` backed by Ajv, as the services build it. */
const ajvCheck = (root: object) => {
  const ajv = makeAjv()
  ajv.addSchema({ ...root, $id: "urn:test:root" })
  return positionCheck(root, (pointer) => {
    const fragment = pointer.split("/").map(encodeURIComponent).join("/")
    const validate = ajv.compile({ $ref: `urn:test:root#${fragment}` })
    return (value) =>
      validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`)
  })
}

type Scalar = {
  t: "scalar"
  type: "string" | "number" | "integer" | "boolean"
  nullable: "no" | "type" | "anyOf"
  /** An extra constraint: an enum, a pattern, a format, a minimum. */
  rule: "none" | "enum" | "pattern" | "format" | "minimum"
  valueType: MappingAgent["value_type"]
  notFound: string
}
type Label = { t: "label"; type: "string" | "integer" | "enum"; nullable: boolean }
type Shape =
  | Scalar
  | {
      t: "object"
      props: ReadonlyArray<{ name: string; required: boolean; shape: Shape }>
      closed: boolean
    }
  | { t: "array"; item: Shape; minItems: number; label: { shape: Label; required: boolean } | null }
  | { t: "dict"; value: Shape; minProperties: number }
  | Label

const scalar: fc.Arbitrary<Scalar> = fc.record({
  t: fc.constant("scalar" as const),
  type: fc.constantFrom("string" as const, "number" as const, "integer" as const, "boolean" as const),
  nullable: fc.constantFrom("no" as const, "no" as const, "type" as const, "anyOf" as const),
  rule: fc.constantFrom(
    "none" as const,
    "none" as const,
    "enum" as const,
    "pattern" as const,
    "format" as const,
    "minimum" as const,
  ),
  valueType: fc.constantFrom<MappingAgent["value_type"]>("string", "number", "number", "bool"),
  notFound: fc.constantFrom("", "", "0", "none", "USD", "2024-01-01", "-1", "unknown"),
})

const label: fc.Arbitrary<Label> = fc.record({
  t: fc.constant("label" as const),
  type: fc.constantFrom("string" as const, "integer" as const, "enum" as const),
  nullable: fc.boolean(),
})

const shapes = fc.letrec<{ shape: Shape; object: Shape }>((tie) => ({
  shape: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalar,
    tie("object"),
    fc.record({
      t: fc.constant("array" as const),
      item: tie("shape"),
      minItems: fc.constantFrom(0, 0, 1, 2),
      label: fc.option(fc.record({ shape: label, required: fc.boolean() }), { nil: null }),
    }),
    fc.record({
      t: fc.constant("dict" as const),
      value: tie("shape"),
      minProperties: fc.constantFrom(0, 0, 1),
    }),
  ),
  object: fc.record({
    t: fc.constant("object" as const),
    props: fc.uniqueArray(
      fc.record({
        name: fc.constantFrom("a", "b", "c/d", "e~f", "g h"),
        required: fc.boolean(),
        shape: tie("shape"),
      }),
      { selector: (p) => p.name, minLength: 1, maxLength: 4 },
    ),
    closed: fc.boolean(),
  }),
})).object

const DIMENSION_VALUES = ["v0", "12", "EUR"]
const VALUES = ["12", "3.5", "-4", "yes", "no", "abc", "usd", "EUR", "2024-01-31", "1,000", " x ", ""]

const nullable = (schema: Record<string, unknown>, how: Scalar["nullable"]) =>
  how === "no"
    ? schema
    : how === "type"
      ? { ...schema, type: [schema.type, "null"] }
      : { anyOf: [schema, { type: "null" }] }

const RULES: Record<Scalar["type"], Record<Scalar["rule"], Record<string, unknown>>> = {
  string: {
    none: {},
    enum: { enum: ["USD", "EUR", "none"] },
    pattern: { pattern: "^[A-Z]{3}$" },
    format: { format: "date" },
    minimum: { minLength: 2 },
  },
  number: { none: {}, enum: { enum: [0, 12, 3.5] }, pattern: {}, format: {}, minimum: { minimum: 0 } },
  integer: { none: {}, enum: { enum: [0, 12, -4] }, pattern: {}, format: {}, minimum: { minimum: 0 } },
  boolean: { none: {}, enum: { enum: [true] }, pattern: {}, format: {}, minimum: {} },
}

/** The schema, mapping and context for a shape. */
const build = (shape: Shape) => {
  const agents: Array<MappingAgent> = []
  const go = (s: Shape, scope: ReadonlyArray<string>): { schema: unknown; mapping: MappingNode } => {
    switch (s.t) {
      case "scalar": {
        const name = `A${agents.length}`
        agents.push({ name, value_type: s.valueType, dimensions: [...scope], value_if_not_found: s.notFound })
        const schema = nullable({ type: s.type, ...RULES[s.type][s.rule] }, s.nullable)
        return { schema, mapping: { kind: "scalar_from_agent", agent_name: name } }
      }
      case "label": {
        const dimension = scope[scope.length - 1]!
        const schema =
          s.type === "enum"
            ? { enum: [...DIMENSION_VALUES.map((v) => v.toUpperCase()), ...(s.nullable ? [null] : [])] }
            : { type: s.nullable ? [s.type, "null"] : s.type }
        return { schema, mapping: { kind: "dimension_value", dimension_name: dimension } }
      }
      case "object": {
        const properties: Record<string, unknown> = {}
        const mapped: Record<string, MappingNode> = {}
        for (const p of s.props) {
          const built = go(p.shape, scope)
          properties[p.name] = built.schema
          mapped[p.name] = built.mapping
        }
        const required = s.props.filter((p) => p.required).map((p) => p.name)
        return {
          schema: {
            type: "object",
            properties,
            required,
            ...(s.closed ? { additionalProperties: false } : {}),
          },
          mapping: { kind: "object", properties: mapped },
        }
      }
      case "array": {
        const dimension = `D${scope.length}`
        const item =
          s.item.t === "object" && s.label !== null
            ? { ...s.item, props: [...s.item.props, { name: "key", ...s.label }] }
            : s.item
        const inner = go(item, [...scope, dimension])
        return {
          schema: { type: "array", items: inner.schema, ...(s.minItems > 0 ? { minItems: s.minItems } : {}) },
          mapping: { kind: "array_from_dimension", dimension_name: dimension, items: inner.mapping },
        }
      }
      case "dict": {
        const dimension = `D${scope.length}`
        const inner = go(s.value, [...scope, dimension])
        return {
          schema: {
            type: "object",
            additionalProperties: inner.schema,
            ...(s.minProperties > 0 ? { minProperties: s.minProperties } : {}),
          },
          mapping: { kind: "object_from_dimension", dimension_name: dimension, values: inner.mapping },
        }
      }
    }
  }
  const built = go(shape, [])
  const dimensions = [0, 1, 2, 3, 4, 5, 6].map((i) => ({ name: `D${i}`, values: DIMENSION_VALUES }))
  return { ...built, ctx: { agents, dimensions } satisfies MappingContext }
}

const SCALAR_TYPES = ["string", "number", "integer", "boolean"]
const RULE_KEYWORDS = ["enum", "pattern", "format", "minimum", "minLength", "minItems", "minProperties"]

/** The schema without the rules a value can break: every scalar position takes any text, number or boolean. */
const loosen = (s: unknown): unknown => {
  if (Array.isArray(s)) return s.map(loosen)
  if (typeof s !== "object" || s === null) return s
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(s)) {
    if (RULE_KEYWORDS.includes(k)) continue
    const types: Array<unknown> = Array.isArray(v) ? v : [v]
    out[k] =
      k === "type" && types.some((t) => SCALAR_TYPES.includes(t as string))
        ? ["string", "number", "boolean", ...(types.includes("null") ? ["null"] : [])]
        : loosen(v)
  }
  return out
}

const leaves = fc.func(
  fc.option(
    fc.record({
      value: fc.option(fc.constantFrom(...VALUES), { nil: null, freq: 3 }),
      status: fc.constantFrom<LeafResult["status"]>("Resolved", "No result", "Requires attention"),
      url: fc.constant("https://app/r"),
    }),
    { nil: undefined, freq: 6 },
  ),
) as fc.Arbitrary<LeafLookup>

describe("schema-shaped results", () => {
  it("validate against their schema, enriched or not, or say that they cannot and why", () => {
    fc.assert(
      fc.property(shapes, leaves, (shape, lookup) => {
        const { schema, mapping, ctx } = build(shape)
        const validate = makeAjv().compile(schema as object)
        const check = ajvCheck(schema as object)
        const plain = renderSchema(schema, mapping, ctx, lookup, { enrich: false, check })
        const enriched = renderSchema(schema, mapping, ctx, lookup, { enrich: true, check })
        expect(enriched.valid).toBe(plain.valid)
        expect(enriched.missing).toEqual(plain.missing)
        expect(Object.hasOwn(plain.value, MISSING_KEY)).toBe(false)
        if (plain.valid) {
          expect(validate(plain.value), JSON.stringify([validate.errors, plain.value])).toBe(true)
          expect(validate(enriched.value), JSON.stringify([validate.errors, enriched.value])).toBe(true)
        } else {
          expect(plain.missing.length).toBeGreaterThan(0)
          expect(enriched.value[MISSING_KEY]).toEqual(plain.missing)
        }
      }),
      { numRuns: 150 },
    )
  })

  it("leave nothing out when every field finds a value its schema accepts", () => {
    const always: LeafLookup = () => ({ value: "12", status: "Resolved", url: "https://app/r" })
    fc.assert(
      fc.property(shapes, (shape) => {
        const { schema, mapping, ctx } = build(shape)
        const loose = loosen(schema) as object
        const r = renderSchema(loose, mapping, ctx, always, { enrich: false, check: ajvCheck(loose) })
        expect(r.valid).toBe(true)
        expect(r.missing).toEqual([])
      }),
      { numRuns: 100 },
    )
  })
})
