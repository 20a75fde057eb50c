import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import {
  AgentValueType,
  DocumentStatus,
  DocumentType,
  FailureReasonOrUnknown,
  isLegacyValueType,
  ResolutionStatus,
  WebhookEvent,
} from "./Enums.ts"

const decodes = (schema: Schema.Schema<any, any, never>, input: unknown) =>
  Either.isRight(Schema.decodeUnknownEither(schema)(input))

describe("Enums", () => {
  it.each([
    [DocumentType, "Word Document", true],
    [DocumentType, "word document", false],
    [DocumentType, "Email", true],
    [DocumentStatus, "Processed", true],
    [DocumentStatus, "Done", false],
    [AgentValueType, "datetime", true],
    [AgentValueType, "integer", false],
    [ResolutionStatus, "Requires attention", true],
    [ResolutionStatus, "No Result", false],
    [WebhookEvent, "agent.completion.failed", true],
    [WebhookEvent, "agent.completion", false],
    [FailureReasonOrUnknown, "some_future_reason", true],
    [FailureReasonOrUnknown, 42, false],
  ] as const)("%#: decoding %j gives %s", (schema, input, ok) => {
    expect(decodes(schema, input)).toBe(ok)
  })

  it.each([
    ["string", false],
    ["number", false],
    ["bool", true],
    ["date", true],
    ["datetime", true],
  ] as const)("isLegacyValueType(%s) is %s", (valueType, legacy) => {
    expect(isLegacyValueType(valueType)).toBe(legacy)
  })
})
