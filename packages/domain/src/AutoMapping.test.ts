import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  type AutoMappingPlan,
  type ExistingAgent,
  type ExistingDimension,
  humanize,
  MAX_MAPPED_FIELDS,
  type PlannedAgent,
  planAutoMapping,
  singularize,
} from "./AutoMapping.ts"
import { schemaAt, schemaTypes } from "./JsonSchema.ts"
import { type MappingNode, validateMapping } from "./OutputMapping.ts"

type Existing = { agents: ReadonlyArray<ExistingAgent>; dimensions: ReadonlyArray<ExistingDimension> }
const NONE: Existing = { agents: [], dimensions: [] }

const plan = (schema: unknown, existing: Existing = NONE) => {
  const p = planAutoMapping(schema, existing)
  if (!p.ok) throw new Error(`expected a plan, got: ${p.error}`)
  return p
}
const agent = (p: { agents: ReadonlyArray<PlannedAgent> }, name: string) => {
  const a = p.agents.find((x) => x.name === name)
  if (a === undefined) throw new Error(`no planned agent ${name}: ${p.agents.map((x) => x.name).join(", ")}`)
  return a
}
const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
  ...extra,
})
const scalar = (agent_name: string): MappingNode => ({ kind: "scalar_from_agent", agent_name })
const dimValue = (dimension_name: string): MappingNode => ({ kind: "dimension_value", dimension_name })
const props = (properties: Record<string, MappingNode>): MappingNode => ({ kind: "object", properties })
const arrayOf = (dimension_name: string, items: MappingNode): MappingNode => ({
  kind: "array_from_dimension",
  dimension_name,
  items,
})
const dictOf = (dimension_name: string, values: MappingNode): MappingNode => ({
  kind: "object_from_dimension",
  dimension_name,
  values,
})

const invoice = obj({
  invoice_number: { type: "string" },
  issue_date: { type: "string", format: "date" },
  total: { type: "number", description: "Total amount due (EUR)" },
  currency: { type: "string", enum: ["USD", "EUR", "GBP"] },
  seller: obj({ name: { type: "string" }, vat_id: { type: "string" } }),
  line_items: {
    type: "array",
    description: "The invoiced products",
    items: obj({
      description: { type: "string" },
      quantity: { type: "integer" },
      amount: { type: "number" },
    }),
  },
  tags: { type: "array", items: { type: "string" } },
  totals_by_region: {
    type: "object",
    additionalProperties: { type: "number" },
    examples: [{ EMEA: 1, APAC: 2 }],
  },
})

describe("labels", () => {
  it.each([
    ["invoice_number", "Invoice number"],
    ["invoiceNumber", "Invoice number"],
    ["invoice-number", "Invoice number"],
    ["InvoiceNumber", "Invoice number"],
    ["vat_id", "VAT ID"],
    ["sellerIBAN", "Seller IBAN"],
    ["VATNumber", "VAT number"],
    ["total", "Total"],
  ])("humanize(%s) = %s", (key, label) => {
    expect(humanize(key)).toBe(label)
  })

  it.each([
    ["Line items", "Line item"],
    ["Parties", "Party"],
    ["Addresses", "Address"],
    ["Entries", "Entry"],
    ["Boxes", "Box"],
    ["Tags", "Tag"],
    ["Status", "Status"],
    ["Statuses", "Status"],
    ["Data", "Data"],
    ["People", "Person"],
    ["Days", "Day"],
  ])("singularize(%s) = %s", (label, singular) => {
    expect(singularize(label)).toBe(singular)
  })
})

describe("planAutoMapping: the invoice schema", () => {
  const p = plan(invoice)

  it("maps every field", () => {
    expect(p.mapping).toEqual({
      kind: "object",
      properties: {
        invoice_number: scalar("Invoice number"),
        issue_date: scalar("Issue date"),
        total: scalar("Total"),
        currency: scalar("Currency"),
        seller: {
          kind: "object",
          properties: { name: scalar("Seller name"), vat_id: scalar("Seller VAT ID") },
        },
        line_items: {
          kind: "array_from_dimension",
          dimension_name: "Line item",
          items: {
            kind: "object",
            properties: {
              description: scalar("Line item description"),
              quantity: scalar("Line item quantity"),
              amount: scalar("Line item amount"),
            },
          },
        },
        tags: { kind: "array_from_dimension", dimension_name: "Tag", items: scalar("Tag") },
        totals_by_region: {
          kind: "object_from_dimension",
          dimension_name: "Region",
          values: scalar("Total by region"),
        },
      },
    })
  })

  it("plans the agents in schema order", () => {
    expect(p.agents.map((a) => [a.name, a.value_type, a.dimensions, a.path])).toEqual([
      ["Invoice number", "string", [], "invoice_number"],
      ["Issue date", "string", [], "issue_date"],
      ["Total", "number", [], "total"],
      ["Currency", "string", [], "currency"],
      ["Seller name", "string", [], "seller/name"],
      ["Seller VAT ID", "string", [], "seller/vat_id"],
      ["Line item description", "string", ["Line item"], "line_items/[*]/description"],
      ["Line item quantity", "number", ["Line item"], "line_items/[*]/quantity"],
      ["Line item amount", "number", ["Line item"], "line_items/[*]/amount"],
      ["Tag", "string", ["Tag"], "tags/[*]"],
      ["Total by region", "number", ["Region"], "totals_by_region/{*}"],
    ])
  })

  it("plans the dimensions", () => {
    expect(p.dimensions).toEqual([
      { name: "Line item", description: "The invoiced products", example_values: "" },
      { name: "Tag", description: "Each tag in the document.", example_values: "" },
      { name: "Region", description: "Each region in the document.", example_values: "EMEA, APAC" },
    ])
  })

  it.each<[string, keyof PlannedAgent, string]>([
    ["Invoice number", "extraction_instructions", "Extract the invoice number."],
    ["Issue date", "extraction_instructions", "Extract the issue date. Answer as a date (YYYY-MM-DD)."],
    ["Total", "extraction_instructions", "Total amount due (EUR). Answer with a number in EUR."],
    ["Total", "unit", "EUR"],
    ["Currency", "extraction_instructions", "Extract the currency. Answer with one of: USD, EUR, GBP."],
    ["Currency", "resolution_instructions", "Answer with one of: USD, EUR, GBP."],
    ["Currency", "examples", "USD, EUR, GBP"],
    ["Currency", "unit", ""],
    ["Seller name", "extraction_instructions", "Extract the name of the seller."],
    ["Seller VAT ID", "extraction_instructions", "Extract the VAT ID of the seller."],
    [
      "Line item amount",
      "extraction_instructions",
      "Extract the amount for each line item. Answer with a number.",
    ],
    ["Line item quantity", "extraction_instructions", "Answer with a whole number."],
    ["Tag", "extraction_instructions", "Extract the tag itself, as written in the document."],
    ["Total by region", "extraction_instructions", "Extract the total by region for each region."],
  ])("%s has %s containing %j", (name, key, text) => {
    expect(String(agent(p, name)[key])).toContain(text)
  })

  it("is deterministic", () => {
    expect(planAutoMapping(structuredClone(invoice), NONE)).toEqual(p)
  })

  it("reuses everything when planned again with its own output", () => {
    const again = plan(invoice, {
      agents: p.agents,
      dimensions: p.dimensions.map((d) => ({ name: d.name, source: "CUSTOM" })),
    })
    expect(again).toEqual({ ok: true, agents: [], dimensions: [], mapping: p.mapping })
  })
})

describe("planAutoMapping: schema features", () => {
  it("follows $ref/$defs items and takes the dimension's description and examples from them", () => {
    const p = plan({
      type: "object",
      properties: { parties: { type: "array", items: { $ref: "#/$defs/Party" } } },
      $defs: {
        Party: {
          type: "object",
          description: "A party to the contract",
          examples: [{ name: "Acme Inc." }, { name: "Beta LLC" }],
          properties: { name: { type: "string" }, role: { $ref: "#/$defs/Role" } },
        },
        Role: { type: "string", enum: ["buyer", "seller"] },
      },
    })
    expect(p.dimensions).toEqual([
      {
        name: "Party",
        description: 'A party to the contract. Each party\'s name goes in "name".',
        example_values: "Acme Inc., Beta LLC",
      },
    ])
    expect(p.agents.map((a) => [a.name, a.dimensions, a.resolution_instructions])).toEqual([
      ["Party role", ["Party"], "Answer with one of: buyer, seller."],
    ])
    expect(p.mapping).toEqual(
      props({ parties: arrayOf("Party", props({ name: dimValue("Party"), role: scalar("Party role") })) }),
    )
  })

  it("unwraps nullable fields", () => {
    const p = plan(
      obj({
        due: { anyOf: [{ type: "string", format: "date-time" }, { type: "null" }] },
        rate: { type: ["number", "null"], title: "Interest rate", description: "Yearly interest in percent" },
        paid: { oneOf: [{ type: "null" }, { type: "boolean" }] },
        buyer: { anyOf: [obj({ name: { type: ["string", "null"] } }), { type: "null" }] },
        note: {},
      }),
    )
    expect(p.agents.map((a) => [a.name, a.value_type, a.unit])).toEqual([
      ["Due", "string", ""],
      ["Interest rate", "number", "%"],
      ["Paid", "string", ""],
      ["Buyer name", "string", ""],
      ["Note", "string", ""],
    ])
    expect(agent(p, "Due").extraction_instructions).toContain("ISO 8601")
    expect(agent(p, "Interest rate").extraction_instructions).toBe(
      "Yearly interest in percent. Answer with a number (a percentage).",
    )
    expect(agent(p, "Paid").extraction_instructions).toBe("Extract the paid. Answer yes or no.")
  })

  it("uses titles, examples, formats and nested context", () => {
    const p = plan(
      obj({
        buyer: obj({
          address: obj({ city: { type: "string", examples: ["Paris", "Oslo"] } }),
          contact: { type: "string", format: "email", title: "E-mail" },
          site: { type: "string", format: "uri" },
        }),
      }),
    )
    expect(p.agents.map((a) => [a.name, a.extraction_instructions, a.examples])).toEqual([
      ["Buyer address city", "Extract the city of the buyer address.", "Paris, Oslo"],
      ["Buyer e-mail", "Extract the e-mail of the buyer. Answer with an e-mail address.", ""],
      ["Buyer site", "Extract the site of the buyer. Answer with a URI (web address).", ""],
    ])
  })

  it("nests dimensions for arrays inside array items, outermost first", () => {
    const p = plan(
      obj({
        orders: {
          type: "array",
          items: obj({
            number: { type: "string" },
            lines: { type: "array", items: obj({ sku: { type: "string" } }) },
            codes: { type: "array", items: { type: "string" } },
          }),
        },
      }),
    )
    expect(p.dimensions.map((d) => d.name)).toEqual(["Order", "Line", "Code"])
    expect(p.agents.map((a) => [a.name, a.dimensions, a.path])).toEqual([
      ["Order number", ["Order"], "orders/[*]/number"],
      ["Order line SKU", ["Order", "Line"], "orders/[*]/lines/[*]/sku"],
      ["Order code", ["Order", "Code"], "orders/[*]/codes/[*]"],
    ])
    expect(agent(p, "Order line SKU").extraction_instructions).toBe(
      "Extract the SKU for each order and each line.",
    )
    expect(agent(p, "Order code").extraction_instructions).toBe(
      "Extract the code itself, as written in the document, for each order.",
    )
  })

  it("maps dimension-keyed objects of objects", () => {
    const p = plan(
      obj({
        stats_per_country: { type: "object", additionalProperties: obj({ revenue: { type: "number" } }) },
      }),
    )
    expect(p.mapping).toEqual({
      kind: "object",
      properties: {
        stats_per_country: {
          kind: "object_from_dimension",
          dimension_name: "Country",
          values: { kind: "object", properties: { revenue: scalar("Country revenue") } },
        },
      },
    })
  })

  it("leaves tuples, false, arrays of arrays, free-form objects and empty objects unmapped", () => {
    const p = plan(
      obj({
        pair: { type: "array", prefixItems: [{ type: "string" }, { type: "number" }] },
        never: false,
        matrix: { type: "array", items: { type: "array", items: { type: "number" } } },
        free: { type: "object" },
        open: { type: "object", additionalProperties: true },
        empty: obj({ nothing: false }),
        mixed: { type: ["string", "object"] },
        kept: { type: "string" },
      }),
    )
    expect(p.mapping).toEqual({ kind: "object", properties: { kept: scalar("Kept") } })
    expect(p.dimensions).toEqual([])
  })

  it("keeps names within 120 characters", () => {
    const long = "x".repeat(100)
    const p = plan(obj({ a: obj({ b: { type: "string", title: long } }, { title: long }) }))
    expect(p.agents[0]!.name.length).toBeLessThanOrEqual(120)
  })

  it("stops descending below depth 8", () => {
    let schema: unknown = { type: "string" }
    for (let i = 12; i >= 1; i--) schema = obj({ [`f${i}`]: { type: "string" }, [`o${i}`]: schema })
    const p = plan(schema)
    expect(p.agents.map((a) => a.path.split("/").length)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9])
  })

  it("terminates on recursive $refs, mapping one level of them", () => {
    const p = plan({
      $ref: "#/$defs/Section",
      $defs: {
        Section: obj({
          heading: { type: "string" },
          parent: { $ref: "#/$defs/Section" },
          subsections: { type: "array", items: { $ref: "#/$defs/Section" } },
          meta: { anyOf: [{ $ref: "#/$defs/Meta" }, { type: "null" }] },
        }),
        Meta: obj({ author: { type: "string" }, about: { $ref: "#/$defs/Section" } }),
      },
    })
    expect(p.agents.map((a) => a.path)).toEqual(["heading", "meta/author"])
  })

  it("terminates on wide mutually recursive schemas", () => {
    const defs = Object.fromEntries(
      ["A", "B", "C"].map((n) => [
        n,
        obj(Object.fromEntries(["A", "B", "C"].flatMap((m) => [[`to_${m}`, { $ref: `#/$defs/${m}` }]]))),
      ]),
    )
    const p = planAutoMapping(
      { ...obj({ x: { type: "string" }, a: { $ref: "#/$defs/A" } }), $defs: defs },
      NONE,
    )
    expect(p).toMatchObject({ ok: true, agents: [{ name: "X" }] })
  })
})

describe("planAutoMapping: the property naming each item", () => {
  const text = { type: "string" }
  const number = { type: "number" }
  const arrayOfObjects = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    type: "array",
    items: obj(properties),
    ...extra,
  })

  it.each<[string, Record<string, unknown>, MappingNode, ReadonlyArray<string>]>([
    [
      "the dimension's name",
      { regions: arrayOfObjects({ region: text, revenue: number }) },
      props({
        regions: arrayOf("Region", props({ region: dimValue("Region"), revenue: scalar("Region revenue") })),
      }),
      ["Region revenue"],
    ],
    [
      "no name: unchanged",
      { line_items: arrayOfObjects({ description: text, amount: number }) },
      props({
        line_items: arrayOf(
          "Line item",
          props({ description: scalar("Line item description"), amount: scalar("Line item amount") }),
        ),
      }),
      ["Line item description", "Line item amount"],
    ],
    [
      "a generic name",
      { parties: arrayOfObjects({ name: text, role: text }) },
      props({ parties: arrayOf("Party", props({ name: dimValue("Party"), role: scalar("Party role") })) }),
      ["Party role"],
    ],
    [
      "the dimension's name over a generic one, and only one",
      { regions: arrayOfObjects({ name: text, id: text, Region: text, code: text }) },
      props({
        regions: arrayOf(
          "Region",
          props({
            name: scalar("Region name"),
            id: scalar("Region ID"),
            Region: dimValue("Region"),
            code: scalar("Region code"),
          }),
        ),
      }),
      ["Region name", "Region ID", "Region code"],
    ],
    [
      "the first generic name",
      { parties: arrayOfObjects({ role: text, label: text, key: text }) },
      props({
        parties: arrayOf(
          "Party",
          props({ role: scalar("Party role"), label: dimValue("Party"), key: scalar("Party key") }),
        ),
      }),
      ["Party role", "Party key"],
    ],
    [
      "a label (title) naming the dimension, nullable",
      {
        countries: arrayOfObjects({
          iso: { type: ["string", "null"], title: "Country" },
          population: number,
        }),
      },
      props({
        countries: arrayOf(
          "Country",
          props({ iso: dimValue("Country"), population: scalar("Country population") }),
        ),
      }),
      ["Country population"],
    ],
    [
      "an enum",
      { regions: arrayOfObjects({ region: { enum: ["EU", "US"] }, revenue: number }) },
      props({
        regions: arrayOf("Region", props({ region: dimValue("Region"), revenue: scalar("Region revenue") })),
      }),
      ["Region revenue"],
    ],
    [
      "an untyped property",
      { regions: arrayOfObjects({ region: {}, revenue: number }) },
      props({
        regions: arrayOf("Region", props({ region: dimValue("Region"), revenue: scalar("Region revenue") })),
      }),
      ["Region revenue"],
    ],
    [
      "not a number, and not a generic name when a property is named after the dimension",
      { regions: arrayOfObjects({ region: { type: "integer" }, name: text }) },
      props({
        regions: arrayOf("Region", props({ region: scalar("Region region"), name: scalar("Region name") })),
      }),
      ["Region region", "Region name"],
    ],
    [
      "not a boolean",
      { items: arrayOfObjects({ id: { type: "boolean" }, price: number }) },
      props({ items: arrayOf("Item", props({ id: scalar("Item ID"), price: scalar("Item price") })) }),
      ["Item ID", "Item price"],
    ],
    [
      "not the only field of the item",
      { regions: arrayOfObjects({ region: text }) },
      props({ regions: arrayOf("Region", props({ region: scalar("Region region") })) }),
      ["Region region"],
    ],
    [
      "not in scalar items",
      { regions: { type: "array", items: text } },
      props({ regions: arrayOf("Region", scalar("Region")) }),
      ["Region"],
    ],
    [
      "a dimension-keyed object of objects, by the dimension's singular",
      { totals_by_regions: { type: "object", additionalProperties: obj({ region: text, total: number }) } },
      props({
        totals_by_regions: dictOf(
          "Regions",
          props({ region: dimValue("Regions"), total: scalar("Regions total") }),
        ),
      }),
      ["Regions total"],
    ],
    [
      "nested items, each with its own dimension",
      { orders: arrayOfObjects({ id: text, lines: arrayOfObjects({ line: text, sku: text }) }) },
      props({
        orders: arrayOf(
          "Order",
          props({
            id: dimValue("Order"),
            lines: arrayOf("Line", props({ line: dimValue("Line"), sku: scalar("Order line SKU") })),
          }),
        ),
      }),
      ["Order line SKU"],
    ],
  ])("%s", (_, properties, mapping, agents) => {
    const p = plan(obj(properties))
    expect(p.mapping).toEqual(mapping)
    expect(p.agents.map((a) => a.name)).toEqual(agents)
  })

  it("says in the dimension's description which property names each item", () => {
    const p = plan(
      obj({
        regions: { type: "array", items: obj({ region: { type: "string" }, revenue: { type: "number" } }) },
        line_items: {
          type: "array",
          description: "The invoiced products",
          items: obj({ id: { type: "string" }, amount: { type: "number" } }),
        },
        tags: { type: "array", items: { type: "string" } },
      }),
    )
    expect(p.dimensions.map((d) => d.description)).toEqual([
      'Each region in the document (its name goes in "region").',
      'The invoiced products. Each line item\'s name goes in "id".',
      "Each tag in the document.",
    ])
  })

  it("takes example values from the naming property of object examples", () => {
    const p = plan(
      obj({
        parties: {
          type: "array",
          items: obj(
            { role: { type: "string" }, name: { type: "string" } },
            { examples: [{ role: "buyer", name: "Acme" }, { role: "seller" }] },
          ),
        },
      }),
    )
    expect(p.dimensions[0]!.example_values).toBe("Acme, seller")
  })

  it("names the reused dimension, matched case-insensitively", () => {
    const p = plan(
      obj({ regions: { type: "array", items: obj({ region: { type: "string" }, n: { type: "number" } }) } }),
      {
        agents: [],
        dimensions: [{ name: "REGION", source: "CUSTOM" }],
      },
    )
    expect(p.dimensions).toEqual([])
    expect(p.mapping).toEqual(
      props({ regions: arrayOf("REGION", props({ region: dimValue("REGION"), n: scalar("Region n") })) }),
    )
  })
})

describe("planAutoMapping: existing agents and dimensions", () => {
  const schema = obj({
    invoice_number: { type: "string" },
    total: { type: "number" },
    line_items: { type: "array", items: obj({ amount: { type: "number" } }) },
    documents: { type: "array", items: obj({ title: { type: "string" } }) },
    tags: { type: "array", items: { type: "string" } },
  })

  it("reuses an agent with the same name, dimensions and value type, and a CUSTOM dimension by name", () => {
    const p = plan(schema, {
      agents: [
        { name: "Invoice number", value_type: "string", dimensions: [] },
        { name: "Line item amount", value_type: "number", dimensions: ["line item"] },
      ],
      dimensions: [{ name: "line item", source: "CUSTOM" }],
    })
    expect(p.agents.map((a) => a.name)).toEqual(["Total", "Document title", "Tag"])
    expect(p.dimensions.map((d) => d.name)).toEqual(["Document 2", "Tag"])
    expect(p.mapping).toMatchObject({
      properties: {
        invoice_number: scalar("Invoice number"),
        line_items: {
          dimension_name: "line item",
          items: { properties: { amount: scalar("Line item amount") } },
        },
      },
    })
  })

  it.each<[string, ReadonlyArray<ExistingAgent>, string]>([
    ["another value type", [{ name: "Total", value_type: "string", dimensions: [] }], "Total (2)"],
    ["other dimensions", [{ name: "Total", value_type: "number", dimensions: ["Region"] }], "Total (2)"],
    [
      "the suffixed name taken too",
      [
        { name: "Total", value_type: "string", dimensions: [] },
        { name: "Total (2)", value_type: "number", dimensions: ["Region"] },
      ],
      "Total (3)",
    ],
    [
      "a matching suffixed agent",
      [
        { name: "Total", value_type: "string", dimensions: [] },
        { name: "Total (2)", value_type: "number", dimensions: [] },
      ],
      "",
    ],
    ["a name differing in case", [{ name: "TOTAL", value_type: "number", dimensions: [] }], "Total (2)"],
    [
      "two agents with the name",
      [
        { name: "Total", value_type: "number", dimensions: [] },
        { name: "Total", value_type: "number", dimensions: [] },
      ],
      "Total (2)",
    ],
  ])("a name collision with %s gets a suffix", (_, agents, planned) => {
    const p = plan(schema, { agents, dimensions: [] })
    const node = (p.mapping as { properties: Record<string, MappingNode> }).properties.total
    expect(p.agents.filter((a) => a.path === "total").map((a) => a.name)).toEqual(
      planned === "" ? [] : [planned],
    )
    expect(node).toEqual(scalar(planned === "" ? "Total (2)" : planned))
  })

  it("avoids the Document dimension, TAG and DOCUMENT dimensions and other planned dimensions", () => {
    const p = plan(
      obj({
        documents: { type: "array", items: { type: "string" } },
        tags: { type: "array", items: { type: "string" } },
        tag: obj({ tags: { type: "array", items: { type: "string" } } }),
        files: { type: "array", items: { type: "string" } },
      }),
      {
        agents: [],
        dimensions: [
          { name: "tag", source: "TAG" },
          { name: "File", source: "DOCUMENT" },
        ],
      },
    )
    expect(p.dimensions.map((d) => d.name)).toEqual(["Document 2", "Tag 2", "Tag 3", "File 2"])
    expect(p.agents.map((a) => [a.name, a.dimensions])).toEqual([
      ["Document", ["Document 2"]],
      ["Tag", ["Tag 2"]],
      ["Tag tag", ["Tag 3"]],
      ["File", ["File 2"]],
    ])
  })
})

describe("planAutoMapping: one item per document", () => {
  const withDocument = { agents: [], dimensions: [{ name: "Document", source: "DOCUMENT" as const }] }

  it.each([
    ["described as one per file", { description: "One entry per uploaded file" }, "invoices"],
    ["named documents", {}, "documents"],
    ["marked with x-dxs-dimension", { "x-dxs-dimension": "Document" }, "invoices"],
  ])("iterates the Document dimension for an array of objects %s", (_what, extra, key) => {
    const p = plan(
      obj({
        [key]: {
          type: "array",
          ...extra,
          items: obj({ file_name: { type: "string" }, total: { type: "number" } }),
        },
      }),
      withDocument,
    )
    expect(p.dimensions).toEqual([])
    expect(p.mapping).toEqual({
      kind: "object",
      properties: {
        [key]: arrayOf("Document", {
          kind: "object",
          properties: {
            file_name: { kind: "dimension_value", dimension_name: "Document" },
            total: scalar(p.agents[0]!.name),
          },
        }),
      },
    })
    expect(p.agents.map((a) => [a.value_type, a.dimensions])).toEqual([["number", ["Document"]]])
  })

  it("keeps a planned dimension when the project has no Document dimension or one already encloses it", () => {
    const perFile = (items: unknown) => ({ type: "array", description: "one per file", items })
    const nested = obj({
      documents: perFile(obj({ name: { type: "string" }, pages: perFile(obj({ n: { type: "integer" } })) })),
    })
    const p = plan(nested, withDocument)
    expect(p.mapping).toMatchObject({
      properties: {
        documents: {
          dimension_name: "Document",
          items: { properties: { pages: { kind: "array_from_dimension" } } },
        },
      },
    })
    const inner = (p.mapping as any).properties.documents.items.properties.pages.dimension_name
    expect(inner).not.toBe("Document")
    expect(p.dimensions.map((d) => d.name)).toEqual([inner])
    const without = plan(
      obj({ documents: perFile(obj({ name: { type: "string" }, total: { type: "number" } })) }),
      {
        agents: [],
        dimensions: [],
      },
    )
    expect(without.dimensions.map((d) => d.name)).toEqual(["Document 2"])
  })
})

describe("planAutoMapping: refusals", () => {
  it.each<[string, unknown, RegExp]>([
    ["a string schema", { type: "string" }, /root must be an object schema with properties/],
    ["an array schema", { type: "array", items: obj({ a: { type: "string" } }) }, /root must be an object/],
    ["true", true, /root must be an object/],
    ["null", null, /root must be an object/],
    ["an object without properties", { type: "object" }, /root must be an object/],
    ["a keyed root", { type: "object", additionalProperties: { type: "string" } }, /root must be an object/],
    ["nothing mappable", obj({ a: false, b: { type: "object" } }), /No field of the schema can be mapped/],
  ])("refuses %s", (_, schema, error) => {
    const p = planAutoMapping(schema, NONE)
    expect(p.ok).toBe(false)
    expect(p.ok ? "" : p.error).toMatch(error)
  })

  const fields = (n: number) =>
    Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, { type: "string" }]))

  it("refuses more than MAX_MAPPED_FIELDS fields, counting those inside arrays", () => {
    expect(planAutoMapping(obj(fields(MAX_MAPPED_FIELDS)), NONE).ok).toBe(true)
    const p = planAutoMapping(
      obj({ ...fields(MAX_MAPPED_FIELDS - 1), rows: { type: "array", items: obj(fields(2)) } }),
      NONE,
    )
    expect(p).toEqual({ ok: false, error: expect.stringMatching(/more than 200 fields/) })
  })
})

// ---- properties over random schemas -------------------------------------------------------------------

const KEYS = [
  "name",
  "Name",
  "items",
  "item",
  "line_items",
  "documents",
  "tags",
  "total",
  "a_b",
  "aB",
  "x~/y",
  "id",
]

const schemaArb: fc.Arbitrary<unknown> = fc.letrec<{ node: unknown; object: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom<unknown>(
      { type: "string" },
      { type: "number" },
      { type: "integer" },
      { type: "boolean" },
      { type: ["string", "null"], format: "date" },
      { enum: ["a", "b"] },
      { anyOf: [{ type: "number" }, { type: "null" }] },
      {},
      false,
      { $ref: "#" },
      { type: "array", prefixItems: [{ type: "string" }] },
    ),
    tie("object"),
    tie("node").map((items) => ({ type: "array", items })),
    tie("node").map((values) => ({ type: "object", additionalProperties: values })),
    tie("node").map((inner) => ({ anyOf: [inner, { type: "null" }] })),
    fc
      .tuple(tie("node"), fc.constantFrom("Name", "Item", "Tag", "Document"))
      .map(([inner, title]) => (typeof inner === "object" ? { ...inner, title } : inner)),
  ),
  object: fc
    .dictionary(fc.constantFrom(...KEYS), tie("node"), { maxKeys: 5 })
    .map((properties) => ({ type: "object", properties })),
})).object

/**
 * Scalar positions of a mapping: path, agent name, dimensions bound by the enclosing nodes; the dimension
 * value positions; the dimensions iterated; the largest number of dimension values in one object.
 */
const positions = (node: MappingNode, path = "", bound: ReadonlyArray<string> = []) => {
  const out: Array<{ path: string; agent: string; bound: ReadonlyArray<string> }> = []
  const values: Array<{ path: string; dimension: string; bound: ReadonlyArray<string> }> = []
  const dims: Array<string> = []
  let valuesPerObject = 0
  const walk = (n: MappingNode, p: string, b: ReadonlyArray<string>) => {
    const at = (segment: string) => (p === "" ? segment : `${p}/${segment}`)
    switch (n.kind) {
      case "scalar_from_agent":
        out.push({ path: p, agent: n.agent_name, bound: b })
        return
      case "dimension_value":
        values.push({ path: p, dimension: n.dimension_name, bound: b })
        return
      case "object":
        valuesPerObject = Math.max(
          valuesPerObject,
          Object.values(n.properties).filter((sub) => sub.kind === "dimension_value").length,
        )
        for (const [k, sub] of Object.entries(n.properties))
          walk(sub, at(k.replace(/~/g, "~0").replace(/\//g, "~1")), b)
        return
      case "array_from_dimension":
        dims.push(n.dimension_name)
        walk(n.items, at("[*]"), [...b, n.dimension_name])
        return
      case "object_from_dimension":
        dims.push(n.dimension_name)
        walk(n.values, at("{*}"), [...b, n.dimension_name])
    }
  }
  walk(node, path, bound)
  return { scalars: out, values, dims, valuesPerObject }
}

const existingArb = fc.record({
  agents: fc.array(fc.tuple(fc.nat(), fc.constantFrom("same", "type", "dims", "case")), { maxLength: 6 }),
  dimensions: fc.array(
    fc.tuple(
      fc.constantFrom("Item", "item", "Tag", "Name", "Document 2", "Line item"),
      fc.constantFrom("CUSTOM", "TAG"),
    ),
    { maxLength: 3 },
  ),
})

type ExistingSpec = typeof existingArb extends fc.Arbitrary<infer T> ? T : never

/** Existing agents and dimensions derived from a first plan: some identical, some colliding. */
const existingFrom = (schema: unknown, spec: ExistingSpec): Existing => {
  const first = planAutoMapping(schema, NONE)
  const planned = first.ok ? first.agents : []
  const agents =
    planned.length === 0
      ? []
      : spec.agents.map(([i, how]): ExistingAgent => {
          const a = planned[i % planned.length]!
          return how === "same"
            ? { name: a.name, value_type: a.value_type, dimensions: a.dimensions }
            : how === "type"
              ? {
                  name: a.name,
                  value_type: a.value_type === "number" ? "string" : "number",
                  dimensions: a.dimensions,
                }
              : how === "dims"
                ? { name: a.name, value_type: a.value_type, dimensions: [...a.dimensions, "Other"] }
                : { name: a.name.toUpperCase(), value_type: a.value_type, dimensions: a.dimensions }
        })
  const seen = new Set<string>()
  const dimensions = spec.dimensions.flatMap(([name, source]): Array<ExistingDimension> => {
    if (seen.has(name.toLowerCase())) return []
    seen.add(name.toLowerCase())
    return [{ name, source: source as ExistingDimension["source"] }]
  })
  return { agents, dimensions }
}

describe("planAutoMapping: properties", () => {
  const check = (schema: unknown, existing: Existing, p: AutoMappingPlan) => {
    if (!p.ok) {
      expect(p.error).toMatch(/No field|more than|root must be/)
      return
    }
    const lower = (s: string) => s.toLowerCase()
    const names = p.agents.map((a) => a.name)
    expect(new Set(names.map(lower)).size).toBe(names.length)
    for (const n of names) expect(n.length).toBeLessThanOrEqual(120)
    const { scalars, values, dims, valuesPerObject } = positions(p.mapping)
    // agents: planned, or existing with exactly that name and matching dimensions
    for (const s of scalars) {
      const planned = p.agents.filter((a) => a.name === s.agent)
      const reused = existing.agents.filter((a) => a.name === s.agent)
      expect(planned.length + reused.length).toBe(1)
      const dimsOf = planned[0]?.dimensions ?? reused[0]!.dimensions
      expect([...dimsOf].sort()).toEqual([...s.bound].sort())
      if (planned[0] !== undefined) expect(planned[0].dimensions).toEqual(s.bound)
    }
    expect(new Set(scalars.map((s) => s.agent)).size).toBe(scalars.length)
    for (const a of p.agents)
      expect(scalars).toContainEqual({ path: a.path, agent: a.name, bound: a.dimensions })
    // dimensions: planned, or an existing CUSTOM one; planned ones avoid Document, TAG and each other
    const plannedDims = p.dimensions.map((d) => d.name)
    for (const d of dims)
      expect(
        plannedDims.includes(d) || existing.dimensions.some((e) => e.name === d && e.source === "CUSTOM"),
      ).toBe(true)
    expect(new Set(dims.map(lower)).size).toBe(dims.length)
    // dimension values: of the innermost dimension, at most one per item, in text positions, with no agent
    expect(valuesPerObject).toBeLessThanOrEqual(1)
    for (const v of values) {
      expect(v.dimension).toBe(v.bound[v.bound.length - 1])
      expect(schemaTypes(schema, schemaAt(schema, v.path)).every((t) => t === "string")).toBe(true)
      expect(p.agents.map((a) => a.path)).not.toContain(v.path)
    }
    for (const d of plannedDims) {
      expect(lower(d)).not.toBe("document")
      expect(existing.dimensions.map((e) => lower(e.name))).not.toContain(lower(d))
    }
    // and the mapping validates against the schema
    const reusedAgents = existing.agents.filter((a) => scalars.some((s) => s.agent === a.name))
    const diagnostics = validateMapping(schema, p.mapping, {
      agents: [...p.agents, ...reusedAgents].map((a) => ({
        name: a.name,
        value_type: a.value_type as "string" | "number",
        dimensions: a.dimensions,
      })),
      dimensions: [...p.dimensions, ...existing.dimensions].map((d) => ({ name: d.name, values: [] })),
    })
    expect(diagnostics.filter((d) => d.severity === "error")).toEqual([])
  }

  it("plans unique agents and dimensions consistent with the mapping, which validates", () => {
    fc.assert(
      fc.property(schemaArb, existingArb, (schema, spec) => {
        const existing = existingFrom(schema, spec)
        check(schema, existing, planAutoMapping(schema, existing))
      }),
      { numRuns: 300 },
    )
  })

  it("generates schemas whose plans use dimension values", () => {
    const plans = fc
      .sample(schemaArb, { numRuns: 300, seed: 42 })
      .map((schema) => planAutoMapping(schema, NONE))
    const withValues = plans.filter((p) => p.ok && positions(p.mapping).values.length > 0)
    expect(withValues.length).toBeGreaterThan(5)
  })

  it("is deterministic and reuses its own output when planned again", () => {
    fc.assert(
      fc.property(schemaArb, (schema) => {
        const p = planAutoMapping(schema, NONE)
        expect(planAutoMapping(structuredClone(schema), NONE)).toEqual(p)
        if (!p.ok) return
        const again = planAutoMapping(schema, {
          agents: p.agents,
          dimensions: p.dimensions.map((d) => ({ name: d.name, source: "CUSTOM" })),
        })
        expect(again).toEqual({ ok: true, agents: [], dimensions: [], mapping: p.mapping })
      }),
      { numRuns: 200 },
    )
  })
})
