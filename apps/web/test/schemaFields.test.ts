import { describe, expect, it } from "vitest"
import {
  childPath,
  fieldsToMapping,
  fieldsToSchema,
  mappingIntoFields,
  newField,
  type SchemaField,
  schemaToFields,
} from "../src/schemaFields.ts"

const field = (patch: Partial<SchemaField>): SchemaField => ({ ...newField(), ...patch })

/** The fields without their row keys, to compare. */
const strip = (fields: ReadonlyArray<SchemaField>): unknown =>
  fields.map(({ id: _id, children, ...rest }) => ({ ...rest, children: strip(children) }))

const invoiceSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: {
    total: { type: "number", description: "the amount due" },
    supplier: {
      type: "object",
      properties: { name: { type: "string" }, vat: { type: "string" } },
      required: ["name"],
    },
    tags: { type: "array", items: { type: "string" } },
    lines: {
      type: "array",
      items: { type: "object", properties: { amount: { type: "integer" }, paid: { type: "boolean" } } },
    },
  },
  required: ["total"],
  title: "Invoice",
}

describe("schemaToFields and fieldsToSchema", () => {
  it("read scalars, nested objects, arrays of scalars and of objects, descriptions and required", () => {
    const read = schemaToFields(invoiceSchema)
    expect(read.ok).toBe(true)
    if (!read.ok) return
    const [total, supplier, tags, lines] = read.value.fields
    expect(total).toMatchObject({
      name: "total",
      type: "number",
      description: "the amount due",
      required: true,
    })
    expect(supplier).toMatchObject({ name: "supplier", type: "object", required: false })
    expect(supplier!.children.map((c) => [c.name, c.type, c.required])).toEqual([
      ["name", "string", true],
      ["vat", "string", false],
    ])
    expect(tags).toMatchObject({ type: "array", itemType: "string", children: [] })
    expect(lines).toMatchObject({ type: "array", itemType: "object" })
    expect(lines!.children.map((c) => [c.name, c.type])).toEqual([
      ["amount", "integer"],
      ["paid", "boolean"],
    ])
    expect(read.value.root).toEqual({ $schema: invoiceSchema.$schema, title: "Invoice" })
  })

  it("give back the same schema for a schema they can edit", () => {
    const read = schemaToFields(invoiceSchema)
    if (!read.ok) throw new Error(read.reason)
    expect(fieldsToSchema(read.value.fields, read.value.root)).toEqual(invoiceSchema)
  })

  it("build a schema from new fields, leaving out fields without a name", () => {
    const fields = [
      field({ name: "total", type: "number", required: true }),
      field({ name: "" }),
      field({
        name: "supplier",
        type: "object",
        description: "who sent it",
        children: [field({ name: "name", required: true })],
      }),
    ]
    expect(fieldsToSchema(fields)).toEqual({
      type: "object",
      properties: {
        total: { type: "number" },
        supplier: {
          type: "object",
          description: "who sent it",
          properties: { name: { type: "string" } },
          required: ["name"],
        },
      },
      required: ["total"],
    })
    const back = schemaToFields(fieldsToSchema(fields))
    if (!back.ok) throw new Error(back.reason)
    expect(strip(back.value.fields)).toEqual(strip(fields.filter((f) => f.name !== "")))
  })

  it("refuse what the form cannot show instead of dropping it", () => {
    const refused = (schema: unknown) => {
      const r = schemaToFields(schema)
      return r.ok ? "" : r.reason
    }
    expect(refused({ type: "array" })).toMatch(/root is not an object/)
    expect(refused({ type: "object", properties: { a: { type: ["string", "null"] } } })).toMatch(
      /"a" has no single type/,
    )
    expect(refused({ type: "object", properties: { a: { type: "string", enum: ["x"] } } })).toMatch(
      /uses "enum"/,
    )
    expect(refused({ type: "object", properties: { a: { $ref: "#/$defs/x" } } })).toMatch(
      /"a" has no single type/,
    )
    expect(refused({ type: "object", $defs: {}, properties: {} })).toMatch(/uses "\$defs" at the root/)
    expect(
      refused({
        type: "object",
        properties: { a: { type: "array", items: { type: "string", format: "date" } } },
      }),
    ).toMatch(/items of "a" use "format"/)
  })
})

describe("fieldsToMapping and mappingIntoFields", () => {
  const fields = [
    field({ name: "total", type: "number", agent: "Total due" }),
    field({
      name: "supplier",
      type: "object",
      children: [field({ name: "name", agent: "Supplier" }), field({ name: "vat" })],
    }),
    field({ name: "unmapped", type: "object", children: [field({ name: "x" })] }),
    field({
      name: "lines",
      type: "array",
      itemType: "object",
      dimension: "Line",
      children: [field({ name: "amount", type: "number", agent: "Line amount" })],
    }),
    field({ name: "tags", type: "array", itemType: "string", dimension: "Tag", agent: "Tag name" }),
  ]
  const mapping = {
    kind: "object",
    properties: {
      total: { kind: "scalar_from_agent", agent_name: "Total due" },
      supplier: {
        kind: "object",
        properties: { name: { kind: "scalar_from_agent", agent_name: "Supplier" } },
      },
      lines: {
        kind: "array_from_dimension",
        dimension_name: "Line",
        items: {
          kind: "object",
          properties: { amount: { kind: "scalar_from_agent", agent_name: "Line amount" } },
        },
      },
      tags: {
        kind: "array_from_dimension",
        dimension_name: "Tag",
        items: { kind: "scalar_from_agent", agent_name: "Tag name" },
      },
    },
  }

  it("map each leaf to its agent and each array to its dimension, leaving out what is not mapped", () => {
    expect(fieldsToMapping(fields)).toEqual(mapping)
    expect(fieldsToMapping([field({ name: "a" })])).toBeNull()
  })

  it("read a mapping back into the fields", () => {
    const blank = fields.map((f) => ({
      ...f,
      agent: "",
      dimension: "",
      children: f.children.map((c) => ({ ...c, agent: "" })),
    }))
    const applied = mappingIntoFields(blank, mapping)
    if (!applied.ok) throw new Error(applied.reason)
    expect(strip(applied.value)).toEqual(strip(fields))
    const cleared = mappingIntoFields(fields, null)
    if (!cleared.ok) throw new Error(cleared.reason)
    expect(fieldsToMapping(cleared.value)).toBeNull()
  })

  it("refuse mappings the form cannot show", () => {
    const reason = (m: unknown) => {
      const r = mappingIntoFields(fields, m)
      return r.ok ? "" : r.reason
    }
    expect(
      reason({
        kind: "object",
        properties: {
          total: { kind: "scalar_from_agent", agent_name: "T", dimension_values: { Region: "EU" } },
        },
      }),
    ).toMatch(/pins dimension values/)
    expect(
      reason({ kind: "object", properties: { nope: { kind: "scalar_from_agent", agent_name: "T" } } }),
    ).toMatch(/"nope"/)
    expect(
      reason({
        kind: "object",
        properties: { total: { kind: "object_from_dimension", dimension_name: "D", values: {} } },
      }),
    ).toMatch(/not a scalar_from_agent/)
  })

  it("name each field by the diagnostics' paths", () => {
    const supplier = fields[1]!
    expect(childPath("", supplier, false)).toBe("supplier")
    expect(childPath("supplier", supplier.children[0]!, false)).toBe("supplier/name")
    expect(childPath("lines", fields[3]!.children[0]!, true)).toBe("lines/[*]/amount")
    expect(childPath("", field({ name: "a/b~c" }), false)).toBe("a~1b~0c")
  })
})
