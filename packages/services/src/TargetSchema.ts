/**
 * Checking a target output schema before it is stored: valid JSON Schema Draft 2020-12 (Ajv's meta-schema
 * and a compile, so unresolvable `$ref`s are caught; in a worker thread, see SchemaCheckThread.ts),
 * describing a JSON object, and of a sensible size.
 * Also the validator that tests and callers use to check a result against its schema.
 */
import { createHash } from "node:crypto"
import { createRequire } from "node:module"
import {
  nullCheck,
  type PositionCheck,
  positionCheck,
  schemaTypes,
  type ValueCheck,
} from "@dxs/domain/JsonSchema"
import { defaultInputLimits, inputIssue, jsonTextDepth } from "@dxs/domain/Limits"
import type { Ajv2020, ErrorObject } from "ajv/dist/2020.js"
import { Effect } from "effect"
import { BadRequest, type FieldError } from "./Errors.ts"
import { RequestLimits } from "./HttpLimits.ts"
import { checkSchemaInThread } from "./SchemaCheckThread.ts"

/** Largest accepted schema, as JSON text. */
export const MAX_SCHEMA_BYTES = 1024 * 1024

const DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

const require = createRequire(import.meta.url)

/**
 * Ajv and ajv-formats (CommonJS, ~90 modules), loaded when a result is first validated rather than when
 * the API server starts.
 */
const ajvModules = (): {
  readonly Ajv: typeof Ajv2020
  readonly addFormats: (ajv: Ajv2020) => Ajv2020
} => {
  const formats = require("ajv-formats") as { default?: unknown }
  return {
    Ajv: (require("ajv/dist/2020.js") as { readonly default: typeof Ajv2020 }).default,
    addFormats: (formats.default ?? formats) as (ajv: Ajv2020) => Ajv2020,
  }
}

/** A fresh Ajv for Draft 2020-12 with the standard formats; unknown keywords are allowed (annotations). */
export const makeAjv = (): Ajv2020 => {
  const { Ajv, addFormats } = ajvModules()
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true })
  addFormats(ajv)
  return ajv
}

const fieldErrors = (
  errors: ReadonlyArray<Pick<ErrorObject, "instancePath" | "keyword" | "message">> | null | undefined,
): Array<FieldError> =>
  (errors ?? []).slice(0, 20).map((e) => ({
    path: `schema${e.instancePath}`,
    message: e.message ?? e.keyword,
  }))

const invalid = (detail: string, errors?: ReadonlyArray<FieldError>) =>
  BadRequest.of(detail, errors ?? [{ path: "schema", message: detail }])

/**
 * 400 unless a JSON document given as `path` (a schema, a mapping) stays within the request limits:
 * nesting depth (`MAX_JSON_DEPTH`), string content and lengths. Checked before anything walks it.
 */
export const checkJsonInput = (value: unknown, path: string) =>
  Effect.gen(function* () {
    const { maxJsonDepth } = yield* RequestLimits
    const issue = inputIssue(value, { ...defaultInputLimits, maxDepth: maxJsonDepth })
    if (issue !== undefined) {
      const at = issue.path === "" ? path : `${path}/${issue.path}`
      return yield* BadRequest.of(`${at}: ${issue.message}`, [{ path: at, message: issue.message }])
    }
  })

/** A JSON text given as `path` (the schema field of a multipart request), parsed within the limits. */
export const parseJsonInput = (text: string, path: string) =>
  Effect.gen(function* () {
    const { maxJsonDepth } = yield* RequestLimits
    if (jsonTextDepth(text, maxJsonDepth) > maxJsonDepth)
      return yield* BadRequest.of(`${path} nests deeper than the limit of ${maxJsonDepth} levels`, [
        { path, message: `nests deeper than the limit of ${maxJsonDepth} levels` },
      ])
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (e) {
      return yield* BadRequest.of(
        `${path} is not valid JSON: ${e instanceof Error ? e.message : String(e)}`,
        [{ path, message: "must be a JSON string" }],
      )
    }
    yield* checkJsonInput(value, path)
    return value
  })

/** 400 unless `schema` is a valid Draft 2020-12 JSON Schema whose root describes an object. */
export const checkTargetSchema = (schema: unknown) =>
  Effect.gen(function* () {
    if (typeof schema !== "object" || schema === null || Array.isArray(schema))
      return yield* invalid("schema must be a JSON Schema object (Draft 2020-12)")
    yield* checkJsonInput(schema, "schema")
    if (JSON.stringify(schema).length > MAX_SCHEMA_BYTES)
      return yield* invalid(`schema is larger than ${MAX_SCHEMA_BYTES} bytes`)
    const declared = (schema as { $schema?: unknown }).$schema
    if (declared !== undefined && declared !== DRAFT_2020_12 && declared !== `${DRAFT_2020_12}#`)
      return yield* invalid(
        `schema must be JSON Schema Draft 2020-12 ($schema "${DRAFT_2020_12}"), not ${JSON.stringify(declared)}`,
      )
    const check = yield* Effect.promise(() => checkSchemaInThread(schema))
    if (check.outcome === "invalid")
      return yield* invalid(
        `schema is not valid JSON Schema Draft 2020-12: ${check.text}`,
        fieldErrors(check.errors),
      )
    if (check.outcome === "unusable") return yield* invalid(`schema cannot be used: ${check.text}`)
    const types = schemaTypes(schema, schema)
    if (types.length > 0 && !types.includes("object"))
      return yield* invalid(
        `the schema's root must describe a JSON object (its type is ${types.join(" or ")})`,
      )
  })

const TARGET_ID = "urn:dxs:target-schema"

/** Compiles the subschema at a JSON pointer of one schema, once; the schemas most recently used are kept. */
type Compiler = (pointer: string) => ValueCheck

const compilers = new Map<string, Compiler | undefined>()
const COMPILERS_KEPT = 32

const compilerFor = (schema: Readonly<Record<string, unknown>>): Compiler | undefined => {
  const ajv = makeAjv()
  const own =
    typeof schema.$id === "string" && /^[a-z][a-z0-9+.-]*:/i.test(schema.$id) ? schema.$id : undefined
  // A schema without an absolute $id of its own gets one, so that its subschemas can be named by JSON pointer.
  const id = own ?? TARGET_ID
  try {
    ajv.addSchema(own === undefined ? { ...schema, $id: id } : schema)
  } catch {
    // Not for a stored schema (PUT compiled it); without a validator only types, enums and null are checked.
    return undefined
  }
  const compiled = new Map<string, ValueCheck>()
  return (pointer) => {
    const known = compiled.get(pointer)
    if (known !== undefined) return known
    let check: ValueCheck
    try {
      const fragment = pointer.split("/").map(encodeURIComponent).join("/")
      const validate = ajv.compile({ $ref: `${id}#${fragment}` })
      check = (value) =>
        validate(value)
          ? []
          : (validate.errors ?? []).map((e) =>
              e.instancePath === ""
                ? (e.message ?? e.keyword)
                : `${e.instancePath} ${e.message ?? e.keyword}`,
            )
    } catch {
      // A subschema Ajv cannot name on its own (inside an embedded resource): the answer as a whole is
      // still checked against the root.
      check = () => []
    }
    compiled.set(pointer, check)
    return check
  }
}

/**
 * Checks values against the positions of a stored target schema with Ajv (Draft 2020-12 with formats), for
 * rendering results in its shape. Compiled validators are kept per schema text across calls.
 */
export const targetSchemaCheck = (schema: unknown): PositionCheck => {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return () => []
  const key = createHash("sha256").update(JSON.stringify(schema)).digest("base64")
  const compiler = compilers.has(key)
    ? compilers.get(key)
    : compilerFor(schema as Readonly<Record<string, unknown>>)
  compilers.delete(key)
  if (compilers.size >= COMPILERS_KEPT) compilers.delete(compilers.keys().next().value as string)
  compilers.set(key, compiler)
  return compiler === undefined ? nullCheck(schema) : positionCheck(schema, compiler)
}
