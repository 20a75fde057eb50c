/**
 * The OpenAPI description as a validator: every schema in it compiled once with Ajv (Draft 2020-12,
 * strict), `$ref`s resolved into `components`, so a test can check an answer against the response the
 * description declares for its operation and status.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { expect } from "vitest"

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020

/** The description's own address for Ajv: its `#/components/…` references resolve against it. */
const BASE = "https://dxs.invalid/openapi.json"

/** The members of an OpenAPI document that are not JSON Schema keywords (Ajv ignores them). */
const DOCUMENT_MEMBERS = [
  "openapi",
  "info",
  "servers",
  "paths",
  "webhooks",
  "components",
  "security",
  "tags",
  "externalDocs",
  "jsonSchemaDialect",
]

/**
 * OpenAPI's own formats (its format registry: `int32`, `int64`, `float`, `double`, `password`, `byte`,
 * `binary`); ajv-formats knows JSON Schema's. They annotate, they do not constrain JSON values.
 */
const OPENAPI_FORMATS = ["int32", "int64", "float", "double", "password", "byte", "binary"]

export const HTTP_METHODS = ["get", "post", "put", "patch", "delete"] as const

/** A JSON Pointer to `path`, as a URI fragment. */
const pointer = (path: ReadonlyArray<string>) =>
  `#/${path.map((p) => encodeURIComponent(p.replace(/~/g, "~0").replace(/\//g, "~1"))).join("/")}`

export interface Operation {
  readonly method: (typeof HTTP_METHODS)[number]
  readonly path: string
  readonly op: any
}

/** Every operation of the description. */
export const operationsOf = (doc: any): Array<Operation> =>
  Object.entries(doc.paths as Record<string, any>).flatMap(([path, item]) =>
    HTTP_METHODS.filter((m) => item[m] !== undefined).map((method) => ({ method, path, op: item[method] })),
  )

/** Where a schema sits in the description, and what compiling it said. */
export interface CompiledSchema {
  readonly at: string
  readonly validate?: ValidateFunction
  readonly error?: string
}

export interface Description {
  readonly doc: any
  /** Every schema of the description (components, parameters, request and response bodies), compiled. */
  readonly schemas: ReadonlyArray<CompiledSchema>
  /** Why the description as a whole could not be loaded, if it could not. */
  readonly loadError?: string
  /** The validator of a JSON Pointer's schema (`["paths", p, "get", "responses", "200", …]`). */
  readonly validator: (path: ReadonlyArray<string>) => ValidateFunction
}

const schemaLocations = (doc: any): Array<ReadonlyArray<string>> => {
  const at: Array<ReadonlyArray<string>> = Object.keys(doc.components?.schemas ?? {}).map((name) => [
    "components",
    "schemas",
    name,
  ])
  for (const { method, path, op } of operationsOf(doc)) {
    const base = ["paths", path, method]
    ;(op.parameters ?? []).forEach((p: any, i: number) => {
      if (p.schema !== undefined) at.push([...base, "parameters", String(i), "schema"])
    })
    for (const type of Object.keys(op.requestBody?.content ?? {}))
      if (op.requestBody.content[type].schema !== undefined)
        at.push([...base, "requestBody", "content", type, "schema"])
    for (const [status, response] of Object.entries(op.responses ?? {}) as Array<[string, any]>)
      for (const type of Object.keys(response.content ?? {}))
        if (response.content[type].schema !== undefined)
          at.push([...base, "responses", status, "content", type, "schema"])
  }
  return at
}

/** Loads the description into a strict Ajv 2020 and compiles every schema in it. */
export const compileDescription = (doc: any): Description => {
  const ajv = new Ajv2020({ strict: true, allErrors: true, strictTuples: false })
  addFormats(ajv)
  for (const format of OPENAPI_FORMATS) ajv.addFormat(format, true)
  ajv.addVocabulary(DOCUMENT_MEMBERS)
  let loadError: string | undefined
  try {
    ajv.addSchema({ ...structuredClone(doc), $id: BASE })
  } catch (e) {
    loadError = e instanceof Error ? e.message : String(e)
  }
  const cache = new Map<string, ValidateFunction>()
  const validator = (path: ReadonlyArray<string>) => {
    const ref = `${BASE}${pointer(path)}`
    let validate = cache.get(ref)
    if (validate === undefined) {
      validate = ajv.compile({ $ref: ref })
      cache.set(ref, validate)
    }
    return validate
  }
  const schemas = schemaLocations(doc).map((path): CompiledSchema => {
    const at = path.join(" › ")
    if (loadError !== undefined) return { at, error: loadError }
    try {
      return { at, validate: validator(path) }
    } catch (e) {
      return { at, error: e instanceof Error ? e.message : String(e) }
    }
  })
  return { doc, schemas, validator, ...(loadError === undefined ? {} : { loadError }) }
}

/** Ajv's errors in one line. */
export const errorsText = (errors: ReadonlyArray<ErrorObject> | null | undefined) =>
  (errors ?? [])
    .slice(0, 5)
    .map((e) => `${e.instancePath || "/"} ${e.message ?? ""}`)
    .join("; ")

/** The JSON answer of an operation matches the description's schema for that status (`at`: the described path). */
export const expectDescribed = (
  description: Description,
  body: unknown,
  method: string,
  at: string,
  status: number,
): void => {
  const validate = description.validator([
    "paths",
    at,
    method,
    "responses",
    String(status),
    "content",
    "application/json",
    "schema",
  ])
  expect(validate(body), errorsText(validate.errors)).toBe(true)
}

/** Every `$id` in the description with how often it occurs. */
export const idsOf = (value: unknown, found = new Map<string, number>()): Map<string, number> => {
  if (Array.isArray(value)) for (const v of value) idsOf(v, found)
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      if (k === "$id" && typeof v === "string") found.set(v, (found.get(v) ?? 0) + 1)
      else idsOf(v, found)
    }
  }
  return found
}
