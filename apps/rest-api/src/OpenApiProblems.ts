/**
 * Every error response is served as RFC 9457 problem+json (see Problem.ts), including the framework's
 * request-decoding errors; the generated description is aligned with that here.
 */
const problemSchema = {
  type: "object",
  description: "RFC 9457 problem details",
  required: ["type", "title", "status", "detail", "request_id"],
  properties: {
    type: { type: "string", description: "problem type URI" },
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string", description: "what is wrong, in words" },
    request_id: {
      type: "string",
      description: "the request's id, also in the X-Request-Id header and the server's log",
    },
    errors: {
      type: "array",
      description: "the offending fields, when the request body or parameters are invalid",
      items: {
        type: "object",
        required: ["path", "message"],
        properties: { path: { type: "string" }, message: { type: "string" } },
      },
    },
  },
  additionalProperties: true,
}

/** Answers any request may get before an operation sees it (the server's and the request guard's limits). */
const limitResponses = {
  "431": "The request line and headers are larger than the limit (16 KB): send long values in the body",
  "503":
    "Object storage or the database cannot be reached now (an outage, a restart; `unavailable` says which): the request was not carried out. Send it again after the Retry-After header's seconds",
}
/** … and any request with a body. */
const bodyLimitResponses = {
  "413": "The request body is larger than the limit (MAX_JSON_BYTES; uploads: UPLOAD_MAX_BYTES)",
}

export const problemsInOpenApi = (spec: Record<string, any>): Record<string, any> => {
  spec.components = spec.components ?? {}
  spec.components.schemas = { ...(spec.components.schemas ?? {}), Problem: problemSchema }
  for (const item of Object.values(spec.paths ?? {}) as Array<Record<string, any>>) {
    for (const op of Object.values(item)) {
      if (!op || typeof op !== "object" || !op.responses) continue
      const limits = { ...limitResponses, ...(op.requestBody === undefined ? {} : bodyLimitResponses) }
      for (const [code, description] of Object.entries(limits))
        op.responses[code] = op.responses[code] ?? { description }
      for (const [code, response] of Object.entries(op.responses as Record<string, any>)) {
        if (Number(code) < 400) continue
        response.content = {
          "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } },
        }
      }
    }
  }
  return spec
}
