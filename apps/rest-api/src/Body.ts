import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { Option, ParseResult, Schema, SchemaAST } from "effect"

/**
 * Create/update bodies accept JSON, `application/x-www-form-urlencoded` and `multipart/form-data`.
 * Form values arrive as strings: each is kept when the field accepts the string as it is, else read as
 * JSON (`true`, `12`, `null`, `["a"]`, `{"k":1}`), and an empty string means null where null is allowed.
 */
/**
 * The member the guard adds to every form body it has checked (a NUL can come from no client: the guard
 * refuses it), so that a body is decoded by the rules of its own encoding: a JSON body never by a form's
 * (where `""` means null and `"true"` is read as JSON), and a form never by JSON's.
 */
export const FORM_MARKER = "\u0000form"

const FormRecord = Schema.Struct(
  { [FORM_MARKER]: Schema.Literal("1") },
  Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Array(Schema.String)) }),
)

const accepts = (ast: SchemaAST.AST) => {
  const is = Schema.is(Schema.make(ast))
  return (v: unknown) => is(v)
}

const coerceValue = (accept: (v: unknown) => boolean, raw: string | ReadonlyArray<string>): unknown => {
  if (accept(raw)) return raw
  if (typeof raw !== "string") return raw
  if (raw === "" && accept(null)) return null
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}

const formOf = <S extends Schema.Schema.AnyNoContext>(json: S) => {
  const fields = new Map(
    SchemaAST.getPropertySignatures(Schema.typeSchema(json).ast).map((p) => [
      String(p.name),
      accepts(p.type),
    ]),
  )
  return (
    Schema.transformOrFail(FormRecord, Schema.encodedSchema(json), {
      strict: false,
      decode: (record) =>
        ParseResult.succeed(
          Object.fromEntries(
            Object.entries(record)
              .filter(([k]) => k !== FORM_MARKER)
              .map(([k, v]) => [
                k,
                coerceValue(fields.get(k) ?? (() => true), v as string | ReadonlyArray<string>),
              ]),
          ),
        ),
      encode: (value) =>
        ParseResult.succeed(
          Object.fromEntries([
            [FORM_MARKER, "1"],
            ...Object.entries(value as Record<string, unknown>)
              .filter(([, v]) => v !== undefined)
              .map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
          ]),
        ),
    })
      .pipe(Schema.compose(json, { strict: false }))
      // The form's fields are checked against the encoded body before the body's own schema sees them:
      // unknown ones must be refused there already, not dropped.
      .annotations({
        parseOptions: { onExcessProperty: "error", errors: "all" },
      }) as unknown as Schema.Schema<Schema.Schema.Type<S>, any>
  )
}

/**
 * The form variants are described by the JSON body's schema (its fields, by reference): what they decode
 * to, field by field, rather than the generic map of strings they are read from.
 */
const documentedForm = <S extends Schema.Schema.AnyNoContext>(json: S) => {
  const form = formOf(json)
  const identifier = SchemaAST.getIdentifierAnnotation(json.ast)
  return Option.isSome(identifier)
    ? form.annotations({ jsonSchema: { $ref: `#/components/schemas/${identifier.value}` } })
    : form
}

/**
 * A create/update body in any of the three encodings. Members the body's schema does not declare are
 * refused (400 naming them), in every encoding and at every depth, as the description's
 * `additionalProperties: false` says; every problem of a body is reported, not only the first.
 */
export const flexibleBody = <S extends Schema.Schema.AnyNoContext>(declared: S) => {
  // Annotating anew drops the identifier from the generated description (the body would be inlined and
  // its form variants' references left dangling): it is given again.
  const identifier = SchemaAST.getIdentifierAnnotation(declared.ast)
  const json = declared.annotations({
    parseOptions: { onExcessProperty: "error", errors: "all" },
    ...(Option.isSome(identifier) ? { identifier: identifier.value } : {}),
  }) as unknown as S
  return Schema.Union(
    // Multipart must come first, else the file part is silently dropped (DESIGN §7).
    HttpApiSchema.Multipart(documentedForm(json)),
    json,
    documentedForm(json).pipe(HttpApiSchema.withEncoding({ kind: "UrlParams" })),
  )
}
