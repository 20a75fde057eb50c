/**
 * Every error response is served as RFC 9457 problem+json (see Problem.ts), including the framework's
 * request-decoding errors; the generated description is aligned with that here.
 */
const problemSchema = {
  type: "object",
  description: "RFC 9457 problem details",
  required: ["type", "title", "status", "detail"],
  properties: {
    type: { type: "string", description: "problem type URI" },
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string", description: "what is wrong, in words" },
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

export const problemsInOpenApi = (spec: Record<string, any>): Record<string, any> => {
  spec.components = spec.components ?? {}
  spec.components.schemas = { ...(spec.components.schemas ?? {}), Problem: problemSchema }
  for (const item of Object.values(spec.paths ?? {}) as Array<Record<string, any>>) {
    for (const op of Object.values(item)) {
      if (!op || typeof op !== "object" || !op.responses) continue
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
