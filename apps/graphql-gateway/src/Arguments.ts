/**
 * Arguments decoded by the contract's own schemas (`@dxs/domain/contract`), so GraphQL accepts and refuses
 * exactly what REST does; a refusal is the same `BadRequest` REST answers, naming the argument.
 */
import { ResolutionStatusInput } from "@dxs/domain/contract/Result"
import { BadRequest } from "@dxs/services"
import { Effect, Either, Option, ParseResult, Schema, SchemaAST } from "effect"

/** The schema's own message for a refused value when it has one (REST lists it per field), else the issue. */
const refusalOf = (schema: Schema.Schema.Any, issue: ParseResult.ParseIssue): string => {
  const own = Option.getOrUndefined(SchemaAST.getMessageAnnotation(schema.ast))?.(issue)
  return typeof own === "string" ? own : ParseResult.TreeFormatter.formatIssueSync(issue)
}

/** Decodes an optional argument (null and absent are `undefined`) with `schema`. */
export const optionalArgument = <A, I>(schema: Schema.Schema<A, I>, fieldMessage: string) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (name: string, value: unknown): Effect.Effect<A | undefined, BadRequest> => {
    if (value == null) return Effect.succeed(undefined)
    const decoded = decode(value)
    return Either.isRight(decoded)
      ? Effect.succeed(decoded.right)
      : Effect.fail(
          BadRequest.of(`${name} ${refusalOf(schema, decoded.left.issue)}`, [
            { path: name, message: fieldMessage },
          ]),
        )
  }
}

/** A `resolution_status` argument (GraphQL enum names cannot hold spaces, so it travels as a string). */
export const resolutionStatusArgument = optionalArgument(ResolutionStatusInput, "unknown value")
