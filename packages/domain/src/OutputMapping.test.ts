import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  convertLeaf,
  hasMappingErrors,
  type LeafLookup,
  type LeafResult,
  type MappingAgent,
  type MappingContext,
  type MappingDiagnostic,
  type MappingNode,
  mappingErrors,
  renderSchemaResult,
  validateMapping,
} from "./OutputMapping.ts"

const schema = {
  $defs: {
    Money: { type: ["number", "null"] },
    LineItem: {
      type: "object",
      properties: { description: { type: "string" }, amount: { $ref: "#/$defs/Money" } },
      required: ["description"],
    },
  },
  type: "object",
  properties: {
    invoice: {
      type: "object",
      properties: {
        number: { type: "string" },
        total: { type: "number" },
        paid: { type: "boolean" },
        currency: { enum: ["EUR", "USD"] },
        count: { type: "integer" },
        due: { anyOf: [{ type: "string" }, { type: "null" }] },
        "a/b~c": { type: "string" },
      },
      required: ["number", "total"],
    },
    line_items: { type: "array", items: { $ref: "#/$defs/LineItem" } },
    by_region: { type: "object", additionalProperties: { type: "number" } },
    fixed: { type: "object", properties: { x: { type: "string" } }, additionalProperties: false },
    vendor_name: { type: "string" },
    regions: {
      type: "array",
      items: {
        type: "object",
        properties: {
          region: { type: "string" },
          code: { enum: ["NORTH", "SOUTH"] },
          flag: { type: "boolean" },
          total: { type: "number" },
        },
        required: ["region"],
      },
    },
    years: {
      type: "object",
      additionalProperties: {
        type: "object",
        properties: {
          year: { type: "integer" },
          fy: { type: ["integer", "null"] },
          revenue: { type: "number" },
        },
      },
    },
    region_names: { type: "array", items: { type: "string" } },
  },
}

const agent = (name: string, value_type: MappingAgent["value_type"], dimensions: Array<string> = []) => ({
  name,
  value_type,
  dimensions,
})

const ctx: MappingContext = {
  agents: [
    agent("Number", "string"),
    agent("Total", "number"),
    agent("Paid", "bool"),
    agent("Currency", "string"),
    agent("Count", "number"),
    agent("Due", "date"),
    agent("Odd", "string"),
    agent("Description", "string", ["Line"]),
    agent("Amount", "number", ["Line"]),
    agent("RegionTotal", "number", ["Region"]),
    agent("VendorName", "string", ["Vendor"]),
    agent("Revenue", "number", ["Year"]),
    agent("Dup", "string"),
    agent("Dup", "string"),
  ],
  dimensions: [
    { name: "Line", values: ["L1", "L2", "L3"] },
    { name: "Region", values: ["North", "South"] },
    { name: "Vendor", values: ["Acme", "Globex"] },
    { name: "Year", values: ["2023", "2024", "FY25"] },
  ],
}

const scalar = (agent_name: string, dimension_values?: Record<string, string>): MappingNode =>
  dimension_values === undefined
    ? { kind: "scalar_from_agent", agent_name }
    : { kind: "scalar_from_agent", agent_name, dimension_values }
const obj = (properties: Record<string, unknown>) => ({ kind: "object", properties }) as MappingNode
const arrayOf = (dimension_name: string, items: unknown) =>
  ({ kind: "array_from_dimension", dimension_name, items }) as MappingNode
const dictOf = (dimension_name: string, values: unknown) =>
  ({ kind: "object_from_dimension", dimension_name, values }) as MappingNode
const dimValue = (dimension_name: string): MappingNode => ({ kind: "dimension_value", dimension_name })

const invoice = {
  number: scalar("Number"),
  total: scalar("Total"),
  paid: scalar("Paid"),
  currency: scalar("Currency"),
  count: scalar("Count"),
  due: scalar("Due"),
  "a/b~c": scalar("Odd"),
}

const validMapping = obj({
  invoice: obj(invoice),
  line_items: arrayOf("Line", obj({ description: scalar("Description"), amount: scalar("Amount") })),
  by_region: dictOf("Region", scalar("RegionTotal")),
  vendor_name: scalar("VendorName", { Vendor: "Globex" }),
})

/** The root mapping with `invoice` (valid unless replaced) plus the given properties. */
const root = (props: Record<string, unknown>) => obj({ invoice: obj(invoice), ...props })
const withInvoice = (props: Record<string, unknown>) => root({ invoice: obj({ ...invoice, ...props }) })

const brief = (diags: ReadonlyArray<MappingDiagnostic>) =>
  diags.map(({ path, severity, code }) => ({ path, severity, code }))

type Expected = [path: string, severity: "error" | "warning", code: MappingDiagnostic["code"]]

describe("validateMapping", () => {
  it("accepts a fully valid mapping ($ref, $defs, nullable patterns) with no diagnostics", () => {
    expect(validateMapping(schema, validMapping, ctx)).toEqual([])
  })

  it.each<[string, unknown, ReadonlyArray<Expected>]>([
    ["root malformed", "nope", [["", "error", "node_kind_mismatch"]]],
    ["root scalar on an object schema", scalar("Total"), [["", "error", "node_kind_mismatch"]]],
    ["root without kind", { properties: {} }, [["", "error", "node_kind_mismatch"]]],
    [
      "unknown kind",
      withInvoice({ total: { kind: "sum" } }),
      [["invoice/total", "error", "node_kind_mismatch"]],
    ],
    [
      "object without properties",
      root({ fixed: { kind: "object" } }),
      [["fixed", "error", "node_kind_mismatch"]],
    ],
    [
      "empty agent_name",
      withInvoice({ total: { kind: "scalar_from_agent", agent_name: "" } }),
      [["invoice/total", "error", "node_kind_mismatch"]],
    ],
    [
      "dimension_values not strings",
      root({
        vendor_name: { kind: "scalar_from_agent", agent_name: "VendorName", dimension_values: { Vendor: 1 } },
      }),
      [["vendor_name", "error", "node_kind_mismatch"]],
    ],
    [
      "array without items",
      root({ line_items: { kind: "array_from_dimension", dimension_name: "Line" } }),
      [["line_items", "error", "node_kind_mismatch"]],
    ],
    [
      "object node on a number",
      withInvoice({ total: obj({}) }),
      [["invoice/total", "error", "node_kind_mismatch"]],
    ],
    [
      "array node on an object",
      root({ invoice: arrayOf("Line", scalar("Number")) }),
      [["invoice", "error", "node_kind_mismatch"]],
    ],
    [
      "object_from_dimension on additionalProperties false",
      root({ fixed: dictOf("Region", scalar("RegionTotal")) }),
      [["fixed", "error", "node_kind_mismatch"]],
    ],
    [
      "scalar on an array",
      root({ line_items: scalar("Number") }),
      [["line_items", "error", "node_kind_mismatch"]],
    ],
    [
      "property not in schema",
      withInvoice({ vat: scalar("Total") }),
      [["invoice/vat", "error", "property_not_in_schema"]],
    ],
    [
      "escaped property name",
      withInvoice({ "x/y~z": scalar("Total") }),
      [["invoice/x~1y~0z", "error", "property_not_in_schema"]],
    ],
    [
      "required unmapped, nested in an array",
      root({ line_items: arrayOf("Line", obj({ amount: scalar("Amount") })) }),
      [["line_items/[*]/description", "warning", "required_unmapped"]],
    ],
    [
      "required unmapped in schema order, after the properties",
      root({ invoice: obj({ paid: scalar("Paid"), vat: scalar("Total") }) }),
      [
        ["invoice/vat", "error", "property_not_in_schema"],
        ["invoice/number", "warning", "required_unmapped"],
        ["invoice/total", "warning", "required_unmapped"],
      ],
    ],
    [
      "agent not found",
      withInvoice({ total: scalar("Gross") }),
      [["invoice/total", "error", "agent_not_found"]],
    ],
    [
      "agent names are case-sensitive",
      withInvoice({ total: scalar("total") }),
      [["invoice/total", "error", "agent_not_found"]],
    ],
    [
      "agent ambiguous",
      withInvoice({ number: scalar("Dup") }),
      [["invoice/number", "error", "agent_ambiguous"]],
    ],
    [
      "agent not found inside an array",
      root({
        line_items: arrayOf("Line", obj({ description: scalar("Description"), amount: scalar("Net") })),
      }),
      [["line_items/[*]/amount", "error", "agent_not_found"]],
    ],
    [
      "array over an unknown dimension",
      root({ line_items: arrayOf("Row", obj({ description: scalar("Description") })) }),
      [["line_items", "error", "dimension_not_found"]],
    ],
    [
      "pinned unknown dimension",
      withInvoice({ total: scalar("Total", { Currency: "EUR" }) }),
      [["invoice/total", "error", "dimension_not_found"]],
    ],
    [
      "pinned dimension not on the agent",
      withInvoice({ total: scalar("Total", { Region: "North" }) }),
      [["invoice/total", "error", "dimension_not_on_agent"]],
    ],
    [
      "agent dimension unbound",
      withInvoice({ total: scalar("Amount") }),
      [["invoice/total", "error", "dimension_not_in_scope"]],
    ],
    [
      "pin of a dimension bound by the enclosing node",
      root({ by_region: dictOf("Region", scalar("RegionTotal", { Region: "North" })) }),
      [["by_region/{*}", "error", "dimension_not_in_scope"]],
    ],
    [
      "unknown pinned value",
      root({ vendor_name: scalar("VendorName", { Vendor: "Initech" }) }),
      [["vendor_name", "warning", "dimension_value_unknown"]],
    ],
    [
      "string agent on a number",
      withInvoice({ total: scalar("Number") }),
      [["invoice/total", "warning", "type_incompatible"]],
    ],
    [
      "date agent on an integer",
      withInvoice({ count: scalar("Due") }),
      [["invoice/count", "warning", "type_incompatible"]],
    ],
    [
      "number agent on a boolean",
      withInvoice({ paid: scalar("Total") }),
      [["invoice/paid", "warning", "type_incompatible"]],
    ],
    [
      "number agent on a nullable number ($ref)",
      root({
        line_items: arrayOf("Line", obj({ description: scalar("Description"), amount: scalar("Paid") })),
      }),
      [["line_items/[*]/amount", "warning", "type_incompatible"]],
    ],
    ["compatible conversions", withInvoice({ number: scalar("Total"), paid: scalar("Number") }), []],
    [
      "dimension values in string, enum, integer, nullable and untyped positions",
      root({
        regions: arrayOf("Region", obj({ region: dimValue("Region"), code: dimValue("Region") })),
        years: dictOf(
          "Year",
          obj({ year: dimValue("Year"), fy: dimValue("Year"), revenue: scalar("Revenue") }),
        ),
        region_names: arrayOf("Region", dimValue("Region")),
        line_items: arrayOf("Line", obj({ description: dimValue("Line"), amount: scalar("Amount") })),
      }),
      [],
    ],
    [
      "dimension_value without dimension_name",
      root({ regions: arrayOf("Region", obj({ region: { kind: "dimension_value" } })) }),
      [["regions/[*]/region", "error", "node_kind_mismatch"]],
    ],
    [
      "dimension_value with an empty dimension_name",
      root({ region_names: arrayOf("Region", { kind: "dimension_value", dimension_name: "" }) }),
      [["region_names/[*]", "error", "node_kind_mismatch"]],
    ],
    [
      "dimension_value on an object",
      root({ regions: arrayOf("Region", dimValue("Region")) }),
      [["regions/[*]", "error", "node_kind_mismatch"]],
    ],
    [
      "dimension_value of an unknown dimension",
      root({ regions: arrayOf("Region", obj({ region: dimValue("Country") })) }),
      [["regions/[*]/region", "error", "dimension_not_found"]],
    ],
    [
      "dimension_value outside an iteration of its dimension",
      root({
        vendor_name: dimValue("Vendor"),
        regions: arrayOf("Region", obj({ region: dimValue("Line") })),
      }),
      [
        ["vendor_name", "error", "dimension_not_in_scope"],
        ["regions/[*]/region", "error", "dimension_not_in_scope"],
      ],
    ],
    [
      "dimension_value on a boolean",
      root({ regions: arrayOf("Region", obj({ region: dimValue("Region"), flag: dimValue("Region") })) }),
      [["regions/[*]/flag", "warning", "type_incompatible"]],
    ],
  ])("%s", (_, mapping, expected) => {
    expect(brief(validateMapping(schema, mapping, ctx))).toEqual(
      expected.map(([path, severity, code]) => ({ path, severity, code })),
    )
  })

  it("rejects a dimension iterated twice along a path", () => {
    const nested = { type: "array", items: { type: "array", items: { type: "number" } } }
    const diags = validateMapping(nested, arrayOf("Line", arrayOf("Line", scalar("Amount"))), ctx)
    expect(brief(diags)).toEqual([{ path: "[*]", severity: "error", code: "dimension_not_in_scope" }])
    expect(diags[0]!.message).toContain("already bound by the enclosing array_from_dimension at the root")
  })

  it("maps an object_from_dimension at the root and accepts an enclosing dimension the agent lacks", () => {
    const perRegion = { type: "object", additionalProperties: { type: "object", properties: { t: {} } } }
    expect(validateMapping(perRegion, dictOf("Region", obj({ t: scalar("Total") })), ctx)).toEqual([])
    expect(brief(validateMapping(true, dictOf("Region", obj({ t: scalar("RegionTotal") })), ctx))).toEqual([
      { path: "{*}/t", severity: "error", code: "property_not_in_schema" },
    ])
  })

  it("accepts the value of an outer dimension in an inner iteration", () => {
    const nested = { type: "object", additionalProperties: { type: "array", items: { type: "string" } } }
    expect(validateMapping(nested, dictOf("Region", arrayOf("Line", dimValue("Region"))), ctx)).toEqual([])
    expect(
      renderSchemaResult(nested, dictOf("Region", arrayOf("Line", dimValue("Region"))), ctx, lookupOf({}), {
        enrich: false,
      }),
    ).toEqual({ North: ["North", "North", "North"], South: ["South", "South", "South"] })
  })

  it("explains problems in full sentences", () => {
    const [unbound] = validateMapping(schema, withInvoice({ total: scalar("Amount") }), ctx)
    expect(unbound!.message).toBe(
      'Agent "Amount" is split by dimension "Line", which no enclosing array_from_dimension or object_from_dimension binds; pin it in dimension_values or map the field inside one.',
    )
    const [kind] = validateMapping(schema, withInvoice({ total: obj({}) }), ctx)
    expect(kind!.message).toBe(
      'The schema at "invoice/total" expects number, which an object node cannot produce.',
    )
    const [fixed] = validateMapping(schema, root({ fixed: dictOf("Region", scalar("RegionTotal")) }), ctx)
    expect(fixed!.message).toContain("the schema allows no keys besides its properties")
    const [unknownKind] = validateMapping(schema, { kind: "list" }, ctx)
    expect(unknownKind!.message).toContain('Unknown mapping node kind "list"')
    expect(unknownKind!.message).toContain("dimension_value")
    const [outside] = validateMapping(schema, root({ vendor_name: dimValue("Vendor") }), ctx)
    expect(outside!.message).toBe(
      'Dimension "Vendor" has a value only inside an array_from_dimension or object_from_dimension over it; map the field inside one.',
    )
    const [onObject] = validateMapping(schema, root({ regions: arrayOf("Region", dimValue("Region")) }), ctx)
    expect(onObject!.message).toBe(
      'The schema at "regions/[*]" expects object, which a dimension_value node cannot produce.',
    )
    const [missing] = validateMapping(
      schema,
      root({ region_names: arrayOf("Region", { kind: "dimension_value" }) }),
      ctx,
    )
    expect(missing!.message).toBe('A dimension_value node needs "dimension_name", a non-empty string.')
  })

  it("separates errors from warnings", () => {
    const diags = validateMapping(schema, root({ invoice: obj({ vat: scalar("Total") }) }), ctx)
    expect(brief(mappingErrors(diags))).toEqual([
      { path: "invoice/vat", severity: "error", code: "property_not_in_schema" },
    ])
    expect(hasMappingErrors(diags)).toBe(true)
    expect(hasMappingErrors(diags.filter((d) => d.severity === "warning"))).toBe(false)
  })
})

describe("convertLeaf", () => {
  it.each<[string, unknown, MappingAgent["value_type"], unknown]>([
    ["1,234.50", { type: "number" }, "number", 1234.5],
    ["12", { type: "integer" }, "number", 12],
    ["12.5", { type: "integer" }, "number", undefined],
    ["abc", { type: "number" }, "string", undefined],
    [" Yes ", { type: "boolean" }, "string", true],
    ["unchecked", { type: "boolean" }, "bool", false],
    ["maybe", { type: "boolean" }, "string", undefined],
    ["12", { type: ["string", "number"] }, "number", 12],
    ["12", { type: ["string", "number"] }, "string", "12"],
    ["abc", { type: ["number", "string"] }, "number", "abc"],
    ["true", { type: ["string", "boolean"] }, "bool", true],
    [" eur ", { enum: ["EUR", "USD"] }, "string", "EUR"],
    ["GBP", { enum: ["EUR", "USD"] }, "string", undefined],
    ["2", { enum: [1, 2, 3] }, "number", 2],
    ["2.0", { type: "integer", enum: [1, 2] }, "number", 2],
    ["Acme", { const: "ACME" }, "string", "ACME"],
    ["3.5", {}, "number", 3.5],
    ["yes", {}, "bool", true],
    ["2024-01-31", {}, "date", "2024-01-31"],
  ])("%j as %j from a %s agent", (value, position, valueType, expected) => {
    expect(convertLeaf(value, position, position, valueType)).toEqual(
      expected === undefined ? { ok: false } : { ok: true, value: expected },
    )
  })
})

const key = (agentName: string, dims: Readonly<Record<string, string>>) =>
  [agentName, ...Object.entries(dims).map(([k, v]) => `${k}=${v}`)].sort().join("|")

/** A lookup over `values` keyed by `Agent|Dim=value` (sorted); `null` is "No result". */
const lookupOf =
  (values: Record<string, string | null>): LeafLookup =>
  (agentName, dims) => {
    const k = key(agentName, dims)
    if (!Object.hasOwn(values, k)) return undefined
    const value = values[k]!
    const status: LeafResult["status"] = value === null ? "No result" : "Resolved"
    return { value, status, url: `https://app/${k}` }
  }

const results: Record<string, string | null> = {
  Number: "INV-7",
  Total: "1,234.50",
  Paid: "Yes",
  Currency: " usd ",
  Count: "12.5",
  Due: null,
  Odd: "odd",
  "Description|Line=L1": "Widget",
  "Amount|Line=L1": "10",
  "Description|Line=L3": "Gadget",
  "Amount|Line=L3": null,
  "Region=North|RegionTotal": "7",
  "Region=South|RegionTotal": "n/a",
  "Vendor=Globex|VendorName": "Globex Corp",
  "Revenue|Year=2023": "5",
  "Revenue|Year=FY25": "9",
}

describe("renderSchemaResult", () => {
  const render = (mapping: MappingNode, enrich = false, s: unknown = schema) =>
    renderSchemaResult(s, mapping, ctx, lookupOf(results), { enrich })
  /** The schema with neither the invoice's total nor a line item's description required. */
  const lenient = structuredClone(schema)
  lenient.properties.invoice.required = ["number"]
  lenient.$defs.LineItem.required = []

  it("renders nested objects, arrays, dimension-keyed objects and pinned values with conversions", () => {
    expect(render(validMapping)).toEqual({
      invoice: { number: "INV-7", total: 1234.5, paid: true, currency: "USD", due: null, "a/b~c": "odd" },
      line_items: [
        { description: "Widget", amount: 10 },
        { description: "Gadget", amount: null },
      ],
      by_region: { North: 7 },
      vendor_name: "Globex Corp",
    })
  })

  it("drops array items with no value and keeps the dimension's order", () => {
    const order = { ...ctx, dimensions: [{ name: "Line", values: ["L3", "L2", "L1"] }] }
    const mapping = obj({ line_items: arrayOf("Line", obj({ description: scalar("Description") })) })
    expect(renderSchemaResult(schema, mapping, order, lookupOf(results), { enrich: false })).toEqual({
      line_items: [{ description: "Gadget" }, { description: "Widget" }],
    })
    // an item's null counts as a value; without its required description an item cannot be valid
    const amounts = obj({ line_items: arrayOf("Line", obj({ amount: scalar("Amount") })) })
    expect(render(amounts, false, lenient)).toEqual({ line_items: [{ amount: 10 }, { amount: null }] })
    expect(render(amounts)).toEqual({ line_items: [] })
  })

  it("adds _consistency and _service_url siblings to object fields only", () => {
    const out = render(validMapping, true)
    expect(out.invoice).toEqual({
      number: "INV-7",
      number_consistency: "Resolved",
      number_service_url: "https://app/Number",
      total: 1234.5,
      total_consistency: "Resolved",
      total_service_url: "https://app/Total",
      paid: true,
      paid_consistency: "Resolved",
      paid_service_url: "https://app/Paid",
      currency: "USD",
      currency_consistency: "Resolved",
      currency_service_url: "https://app/Currency",
      count_consistency: "Resolved",
      count_service_url: "https://app/Count",
      due: null,
      due_consistency: "No result",
      due_service_url: "https://app/Due",
      "a/b~c": "odd",
      "a/b~c_consistency": "Resolved",
      "a/b~c_service_url": "https://app/Odd",
    })
    expect((out.line_items as Array<unknown>)[0]).toEqual({
      description: "Widget",
      description_consistency: "Resolved",
      description_service_url: "https://app/Description|Line=L1",
      amount: 10,
      amount_consistency: "Resolved",
      amount_service_url: "https://app/Amount|Line=L1",
    })
    expect(out.by_region).toEqual({ North: 7 })
    expect(out.vendor_name_consistency).toBe("Resolved")
  })

  it("leaves out fields with warnings", () => {
    const mapping = root({
      invoice: obj({ number: scalar("Number"), total: scalar("Number") }),
      vendor_name: scalar("VendorName", { Vendor: "Initech" }),
      line_items: arrayOf("Line", obj({ amount: scalar("Amount") })),
    })
    const diags = validateMapping(schema, mapping, ctx)
    expect(brief(diags).map((d) => d.code)).toEqual([
      "type_incompatible",
      "dimension_value_unknown",
      "required_unmapped",
    ])
    // required fields that are left out leave their object invalid: it is left out, and _missing says so
    expect(render(mapping, true)).toEqual({
      line_items: [],
      _missing: [
        {
          path: "invoice/total",
          dimension_values: {},
          message: `required, but the mapping's type_incompatible warning leaves it out; so "invoice" is left out`,
        },
        ...["L1", "L3"].map((line) => ({
          path: "line_items/[*]/description",
          dimension_values: { Line: line },
          message: `required, but not mapped; so the item for Line "${line}" is left out of "line_items"`,
        })),
      ],
    })
    expect(render(mapping, true, lenient)).toEqual({
      invoice: { number: "INV-7", number_consistency: "Resolved", number_service_url: "https://app/Number" },
      line_items: [
        { amount: 10, amount_consistency: "Resolved", amount_service_url: "https://app/Amount|Line=L1" },
        {
          amount: null,
          amount_consistency: "No result",
          amount_service_url: "https://app/Amount|Line=L3",
        },
      ],
    })
  })

  it("omits No result on non-nullable fields and values that do not fit", () => {
    const nonNullable = { type: "object", properties: { total: { type: "number" }, n: { type: "string" } } }
    const noResults = lookupOf({ Total: null, Number: "x" })
    expect(
      renderSchemaResult(nonNullable, obj({ total: scalar("Total"), n: scalar("Number") }), ctx, noResults, {
        enrich: false,
      }),
    ).toEqual({ n: "x" })
    const nullableInt = { type: "object", properties: { count: { type: ["integer", "null"] } } }
    expect(render(obj({ count: scalar("Count") }), false, nullableInt)).toEqual({ count: null })
  })

  it("passes only the agent's own dimensions to the lookup", () => {
    const calls: Array<Readonly<Record<string, string>>> = []
    const spy: LeafLookup = (name, dims) => {
      calls.push(dims)
      return lookupOf(results)(name, dims)
    }
    const perRegion = {
      type: "object",
      additionalProperties: { type: "object", properties: { t: {}, v: {} } },
    }
    const mapping = dictOf(
      "Region",
      obj({ t: scalar("Total"), v: scalar("VendorName", { Vendor: "Globex" }) }),
    )
    expect(renderSchemaResult(perRegion, mapping, ctx, spy, { enrich: false })).toEqual({
      North: { t: 1234.5, v: "Globex Corp" },
      South: { t: 1234.5, v: "Globex Corp" },
    })
    expect(calls).toEqual([{}, { Vendor: "Globex" }, {}, { Vendor: "Globex" }])
  })

  it("emits the bound dimension value only in items some agent value fills", () => {
    const mapping = root({
      regions: arrayOf(
        "Region",
        obj({ region: dimValue("Region"), code: dimValue("Region"), total: scalar("RegionTotal") }),
      ),
    })
    // South's total ("n/a") does not convert: the item has no agent value and is dropped with its name
    expect(render(mapping).regions).toEqual([{ region: "North", code: "NORTH", total: 7 }])
    expect(render(root({ regions: arrayOf("Region", obj({ region: dimValue("Region") })) })).regions).toEqual(
      [],
    )
  })

  it("converts dimension values like text: numbers parsed, null or left out when they do not fit", () => {
    const mapping = obj({
      years: dictOf(
        "Year",
        obj({ year: dimValue("Year"), fy: dimValue("Year"), revenue: scalar("Revenue") }),
      ),
    })
    expect(render(mapping)).toEqual({
      years: { "2023": { year: 2023, fy: 2023, revenue: 5 }, FY25: { fy: null, revenue: 9 } },
    })
  })

  it("gives every value of the dimension when the item is the dimension value itself", () => {
    expect(render(obj({ region_names: arrayOf("Region", dimValue("Region")) }))).toEqual({
      region_names: ["North", "South"],
    })
    const keyed = { type: "object", additionalProperties: { type: "integer" } }
    expect(render(dictOf("Year", dimValue("Year")), false, keyed)).toEqual({ "2023": 2023, "2024": 2024 })
  })

  it("adds no enrich siblings to dimension values", () => {
    const mapping = obj({
      regions: arrayOf("Region", obj({ region: dimValue("Region"), total: scalar("RegionTotal") })),
    })
    expect(render(mapping, true).regions).toEqual([
      {
        region: "North",
        total: 7,
        total_consistency: "Resolved",
        total_service_url: "https://app/Region=North|RegionTotal",
      },
    ])
  })

  it("always returns an object at the root", () => {
    expect(render(scalar("Total"), false, { type: "number" })).toEqual({})
    expect(
      render(dictOf("Region", scalar("RegionTotal")), false, { additionalProperties: { type: "number" } }),
    ).toEqual({
      North: 7,
    })
    expect(render(scalar("Total"))).toEqual({})
  })
})

// ---------------------------------------------------------------------------------------------------------
// Properties over random schemas with mappings built to match them.

type ScalarType = "string" | "number" | "integer" | "boolean"
type Flaw = "none" | "type" | "pin" | "missing"
/** A dimension_value leaf: of the innermost or outermost bound dimension, or flawed. */
type ValueShape = {
  t: "value"
  type: "string" | "integer" | "enum" | "untyped"
  nullable: boolean
  outer: boolean
  flaw: "none" | "type" | "scope" | "missing"
}
type Shape =
  | { t: "scalar"; type: ScalarType; nullable: "no" | "type" | "anyOf"; pin: boolean; flaw: Flaw }
  | { t: "object"; props: ReadonlyArray<{ name: string; required: boolean; shape: Shape }>; extra: boolean }
  /** `label`: a dimension_value property "key" added to object items. */
  | { t: "array"; item: Shape; label: { shape: ValueShape; required: boolean } | null }
  | { t: "dict"; value: Shape; label: { shape: ValueShape; required: boolean } | null }
  | ValueShape

const shapes = (flawed: boolean) => {
  const value = fc.record({
    t: fc.constant("value" as const),
    type: fc.constantFrom("string" as const, "integer" as const, "enum" as const, "untyped" as const),
    nullable: fc.boolean(),
    outer: fc.boolean(),
    flaw: flawed
      ? fc.constantFrom<ValueShape["flaw"]>("none", "none", "type", "scope", "missing")
      : fc.constant<ValueShape["flaw"]>("none"),
  })
  const label = fc.option(fc.record({ shape: value, required: fc.boolean() }), { nil: null })
  return fc.letrec<{ shape: Shape; element: Shape; object: Shape }>((tie) => ({
    element: fc.oneof({ arbitrary: tie("shape"), weight: 4 }, { arbitrary: value, weight: 1 }),
    shape: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.record({
        t: fc.constant("scalar" as const),
        type: fc.constantFrom<ScalarType>("string", "number", "integer", "boolean"),
        nullable: fc.constantFrom("no" as const, "type" as const, "anyOf" as const),
        pin: fc.boolean(),
        flaw: flawed
          ? fc.constantFrom<Flaw>("none", "none", "type", "pin", "missing")
          : fc.constant<Flaw>("none"),
      }),
      tie("object"),
      fc.record({ t: fc.constant("array" as const), item: tie("element"), label }),
      fc.record({ t: fc.constant("dict" as const), value: tie("element"), label }),
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
      extra: flawed ? fc.boolean() : fc.constant(false),
    }),
  })).object
}

const AGENT_TYPE: Record<ScalarType, MappingAgent["value_type"]> = {
  string: "string",
  number: "number",
  integer: "number",
  boolean: "bool",
}
const INCOMPATIBLE: Record<ScalarType, MappingAgent["value_type"]> = {
  string: "date",
  number: "string",
  integer: "bool",
  boolean: "number",
}

const join = (path: string, segment: string) => (path === "" ? segment : `${path}/${segment}`)
const pointerSegment = (name: string) => name.replace(/~/g, "~0").replace(/\//g, "~1")

const DIMENSION_VALUES = ["v0", "v1", "12"]
const dimensions = [
  ...[0, 1, 2, 3, 4, 5].map((i) => ({ name: `D${i}`, values: DIMENSION_VALUES })),
  { name: "P", values: ["p0", "p1"] },
]

/** The schema, mapping and context for a shape; `omit` leaves one property path unmapped. */
const build = (shape: Shape, omit?: string) => {
  const agents: Array<MappingAgent> = []
  const required: Array<string> = []
  const go = (
    s: Shape,
    path: string,
    scope: ReadonlyArray<string>,
  ): { schema: unknown; mapping: MappingNode } => {
    switch (s.t) {
      case "scalar": {
        const name = s.flaw === "missing" ? "Missing" : `A${agents.length}`
        const dims = s.pin ? [...scope, "P"] : [...scope]
        if (s.flaw !== "missing")
          agents.push(agent(name, s.flaw === "type" ? INCOMPATIBLE[s.type] : AGENT_TYPE[s.type], dims))
        const schema =
          s.nullable === "no"
            ? { type: s.type }
            : s.nullable === "type"
              ? { type: [s.type, "null"] }
              : { anyOf: [{ type: s.type }, { type: "null" }] }
        return { schema, mapping: scalar(name, s.pin ? { P: s.flaw === "pin" ? "p9" : "p0" } : undefined) }
      }
      case "value": {
        const bound = s.outer ? scope[0] : scope[scope.length - 1]
        if (bound === undefined) throw new Error("a dimension_value shape outside an iteration")
        const dim = s.flaw === "scope" ? "P" : s.flaw === "missing" ? "Nope" : bound
        const type = s.flaw === "type" ? "boolean" : s.type
        const schema =
          type === "untyped"
            ? {}
            : type === "enum"
              ? { enum: [...DIMENSION_VALUES.map((v) => v.toUpperCase()), ...(s.nullable ? [null] : [])] }
              : { type: s.nullable ? [type, "null"] : type }
        return { schema, mapping: dimValue(dim) }
      }
      case "object": {
        const properties: Record<string, unknown> = {}
        const mapped: Record<string, MappingNode> = {}
        for (const p of s.props) {
          const sub = join(path, pointerSegment(p.name))
          if (p.required) required.push(sub)
          const built = go(p.shape, sub, scope)
          properties[p.name] = built.schema
          if (sub !== omit) mapped[p.name] = built.mapping
        }
        if (s.extra) mapped.zz = scalar("Missing")
        const req = s.props.filter((p) => p.required).map((p) => p.name)
        return { schema: { type: "object", properties, required: req }, mapping: obj(mapped) }
      }
      case "array":
      case "dict": {
        const dim = `D${scope.length}`
        const element = s.t === "array" ? s.item : s.value
        const labelled =
          element.t === "object" && s.label !== null
            ? { ...element, props: [...element.props, { name: "key", ...s.label }] }
            : element
        const inner = go(labelled, join(path, s.t === "array" ? "[*]" : "{*}"), [...scope, dim])
        return s.t === "array"
          ? { schema: { type: "array", items: inner.schema }, mapping: arrayOf(dim, inner.mapping) }
          : {
              schema: { type: "object", additionalProperties: inner.schema },
              mapping: dictOf(dim, inner.mapping),
            }
      }
    }
  }
  const built = go(shape, "", [])
  return { ...built, ctx: { agents, dimensions } satisfies MappingContext, required }
}

/**
 * Fails when `value` holds a key the mapping does not produce, or any output at a flagged path but the null
 * of a required field that allows null.
 */
const checkOutput = (
  value: unknown,
  node: MappingNode,
  path: string,
  flagged: Set<string>,
  enrich: boolean,
) => {
  if (flagged.has(path)) {
    expect(value).toBeNull()
    return
  }
  switch (node.kind) {
    case "object":
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        if (Object.hasOwn(node.properties, k)) {
          checkOutput(v, node.properties[k]!, join(path, pointerSegment(k)), flagged, enrich)
          continue
        }
        if (enrich && path === "" && k === "_missing") {
          expect(Array.isArray(v) && v.length > 0).toBe(true)
          continue
        }
        const field = k.replace(/_(consistency|service_url)$/, "")
        expect(enrich && field !== k && node.properties[field]?.kind === "scalar_from_agent").toBe(true)
        expect(flagged.has(join(path, pointerSegment(field)))).toBe(false)
      }
      // below the root, an object is output only when an agent filled something in it
      if (path !== "") expect(hasAgentValue(value, node)).toBe(true)
      return
    case "array_from_dimension":
      for (const item of value as Array<unknown>)
        checkOutput(item, node.items, join(path, "[*]"), flagged, enrich)
      return
    case "object_from_dimension":
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        expect(DIMENSION_VALUES).toContain(k)
        checkOutput(v, node.values, join(path, "{*}"), flagged, enrich)
      }
      return
    case "scalar_from_agent":
      expect(["string", "number", "boolean"].includes(typeof value) || value === null).toBe(true)
      return
    case "dimension_value":
      expect(["v0", "v1", "12", "V0", "V1", 12, null]).toContain(value)
  }
}

/** Whether a rendered value holds the value of some agent leaf (null counts). */
const hasAgentValue = (value: unknown, node: MappingNode): boolean => {
  switch (node.kind) {
    case "scalar_from_agent":
      return true
    case "dimension_value":
      return false
    case "object":
      return Object.entries(value as Record<string, unknown>).some(
        ([k, v]) => Object.hasOwn(node.properties, k) && hasAgentValue(v, node.properties[k]!),
      )
    case "array_from_dimension":
      return (value as Array<unknown>).some((v) => hasAgentValue(v, node.items))
    case "object_from_dimension":
      return Object.values(value as Record<string, unknown>).some((v) => hasAgentValue(v, node.values))
  }
}

describe("mapping properties", () => {
  it("a mapping built to match its schema has no diagnostics", () => {
    fc.assert(
      fc.property(shapes(false), (shape) => {
        const { schema, mapping, ctx } = build(shape)
        expect(validateMapping(schema, mapping, ctx)).toEqual([])
      }),
    )
  })

  it("leaving out a required property yields exactly one required_unmapped warning there", () => {
    fc.assert(
      fc.property(shapes(false), fc.nat(), (shape, pick) => {
        const { required } = build(shape)
        fc.pre(required.length > 0)
        const path = required[pick % required.length]!
        const { schema, mapping, ctx } = build(shape, path)
        expect(brief(validateMapping(schema, mapping, ctx))).toEqual([
          { path, severity: "warning", code: "required_unmapped" },
        ])
      }),
    )
  })

  it("rendering emits only mapped keys (plus enrich siblings) and nothing at a flagged path", () => {
    const leaf = fc.option(
      fc.record({
        value: fc.option(fc.constantFrom("12", "3.5", "yes", "no", "abc", " x ", "1,000"), { nil: null }),
        status: fc.constantFrom<LeafResult["status"]>("Resolved", "No result", "Requires attention"),
        url: fc.constant("https://app/r"),
      }),
      { nil: undefined },
    )
    fc.assert(
      fc.property(shapes(true), fc.func(leaf), fc.boolean(), (shape, lookup, enrich) => {
        const { schema, mapping, ctx } = build(shape)
        const flagged = new Set(validateMapping(schema, mapping, ctx).map((d) => d.path))
        const out = renderSchemaResult(schema, mapping, ctx, lookup, { enrich })
        if (Object.keys(out).length > 0) checkOutput(out, mapping, "", flagged, enrich)
      }),
    )
  })
})
