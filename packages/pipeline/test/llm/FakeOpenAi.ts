/**
 * Test helpers for the `openai` provider: the fake server (from `@dxs/testing/FakeOpenAiServer`), request
 * fixtures, and a way to read what the model was asked.
 */

import {
  type ChatCompletionRequestBody,
  type FakeOpenAiServer,
  genericResponder,
  startFakeOpenAiServer,
} from "@dxs/testing/FakeOpenAiServer"
import { Effect, Either } from "effect"
import { afterAll, beforeAll, beforeEach } from "vitest"
import type {
  AgentSpec,
  CandidateExtraction,
  DimensionQuery,
  ModelError,
  PageText,
} from "../../src/llm/LanguageModel.ts"
import { makeOpenAiModel, type OpenAiModelOptions } from "../../src/llm/OpenAi.ts"

export * from "@dxs/testing/FakeOpenAiServer"

/**
 * One fake server for the test file: started before its tests (handed to `started`), closed after them,
 * and before each test reset to answer every request with `genericResponder`.
 */
export const useFakeOpenAiServer = (started: (server: FakeOpenAiServer) => void) => {
  let server: FakeOpenAiServer
  beforeAll(async () => {
    server = await startFakeOpenAiServer()
    started(server)
  })
  afterAll(async () => {
    await server.close()
  })
  beforeEach(() => {
    server.reset()
    server.respond = genericResponder
  })
}

export const agent = (overrides: Partial<AgentSpec> = {}): AgentSpec => ({
  id: "agent-1",
  name: "Revenue",
  extractionInstructions: "Total revenue of the fiscal year",
  valueType: "string",
  unit: "",
  examples: "",
  inconsistencyInstructions: "",
  resolutionInstructions: "",
  enableComplexCalculations: false,
  valueIfNotFound: "",
  derivedPrompt: "",
  isEvaluation: false,
  ...overrides,
})

export const page = (pageNumber: number, text: string): PageText => ({
  documentId: "doc-1",
  documentName: "report.pdf",
  pageNumber,
  text,
})

export const dimension = (
  overrides: Partial<DimensionQuery> & Pick<DimensionQuery, "name">,
): DimensionQuery => ({
  dimensionId: `dim-${overrides.name.toLowerCase()}`,
  description: "",
  exampleValues: "",
  kind: "static",
  values: [],
  ...overrides,
})

export const candidate = (id: string, value: string, overrides: Partial<CandidateExtraction> = {}) => ({
  id,
  value,
  sourceType: "document" as const,
  documentName: "report.pdf",
  pageNumber: 1,
  relevantPassage: `Revenue was ${value}.`,
  ...overrides,
})

/** A model pointed at the fake server, with tiny back-off delays. */
export const modelFor = (server: FakeOpenAiServer, options: Partial<OpenAiModelOptions> = {}) =>
  makeOpenAiModel({ baseUrl: server.baseUrl, model: "test-model", retryBaseMs: 1, ...options })

/** The failure of an effect expected to fail. */
export const failure = async <A>(effect: Effect.Effect<A, ModelError>): Promise<ModelError> => {
  const result = await Effect.runPromise(Effect.either(effect))
  if (Either.isRight(result)) throw new Error("expected a ModelError")
  return result.left
}

export const userMessage = (body: ChatCompletionRequestBody): string =>
  body.messages?.find((m) => m.role === "user")?.content ?? ""

export const schemaName = (body: ChatCompletionRequestBody): string =>
  body.response_format?.json_schema?.name ?? ""

/** The request's JSON schema, for inspection. */
export const schemaOf = (body: ChatCompletionRequestBody): any =>
  body.response_format?.json_schema?.schema ?? {}
