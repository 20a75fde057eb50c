/**
 * The request limits of DESIGN §4 for GraphQL, by the same rules as the REST API's guard: a POST body of
 * at most MAX_JSON_BYTES, read by us before anything parses it; the query text's nesting and the
 * variables' depth, string content and lengths checked before the document is parsed; string literals in
 * the document checked like variables. Over a limit: BAD_USER_INPUT (413 for the body size).
 */
import {
  defaultInputLimits,
  type InputIssue,
  inputIssue,
  jsonTextDepth,
  MAX_TEXT_LENGTH,
  stringContentProblem,
} from "@dxs/domain/Limits"
import {
  type ASTVisitor,
  type ExecutionResult,
  GraphQLError,
  type StringValueNode,
  type ValidationContext,
} from "graphql"
import type { Plugin } from "graphql-yoga"

export interface GraphqlInputLimits {
  readonly maxJsonBytes: number
  readonly maxJsonDepth: number
}

const refusal = (message: string, status = 400, code = "BAD_USER_INPUT") =>
  new GraphQLError(message, { extensions: { code, http: { status } } })

const issueRefusal = (where: string, issue: InputIssue) =>
  refusal(`Invalid ${issue.path === "" ? where : `${where}/${issue.path}`}: ${issue.message}`)

/** Reads a body of at most `maxBytes`, or refuses it (413) as soon as it is longer. */
const readLimited = async (request: Request, maxBytes: number): Promise<string> => {
  const tooLarge = () =>
    refusal(
      `The request body is larger than the limit of ${maxBytes} bytes (MAX_JSON_BYTES)`,
      413,
      "PAYLOAD_TOO_LARGE",
    )
  const declared = Number(request.headers.get("content-length") ?? Number.NaN)
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge()
  if (request.body === null) return ""
  const reader = request.body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined)
      throw tooLarge()
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString("utf8")
}

/**
 * The deepest nesting of braces and brackets in a GraphQL document (selection sets, object and list
 * literals), outside strings, block strings and comments, counted without parsing; stops past `limit`.
 */
export const graphqlTextDepth = (text: string, limit: number): number => {
  let depth = 0
  let max = 0
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (c === "#") {
      while (i < text.length && text[i] !== "\n" && text[i] !== "\r") i++
    } else if (text.startsWith('"""', i)) {
      i += 3
      while (i < text.length && !text.startsWith('"""', i)) i += text.startsWith('\\"""', i) ? 4 : 1
      i += 2
    } else if (c === '"') {
      i++
      while (i < text.length && text[i] !== '"' && text[i] !== "\n") i += text[i] === "\\" ? 2 : 1
    } else if (c === "{" || c === "[" || c === "(") {
      depth++
      if (depth > max) {
        max = depth
        if (max > limit) return max
      }
    } else if (c === "}" || c === "]" || c === ")") depth--
    i++
  }
  return max
}

/** Strings written into the document itself are held to the rules of variables. */
const stringLiterals = (context: ValidationContext): ASTVisitor => ({
  StringValue(node: StringValueNode) {
    const problem =
      stringContentProblem(node.value) ??
      (node.value.length > MAX_TEXT_LENGTH ? `must be at most ${MAX_TEXT_LENGTH} characters` : undefined)
    if (problem !== undefined)
      context.reportError(
        new GraphQLError(`Invalid string literal: ${problem}`, {
          nodes: [node],
          extensions: { code: "BAD_USER_INPUT" },
        }),
      )
  },
})

/** Selection depth is limited separately (MAX_DEPTH); literals may nest up to the JSON depth within it. */
const SELECTION_ALLOWANCE = 16

export const inputLimitsPlugin = (limits: GraphqlInputLimits): Plugin => ({
  onRequestParse: ({ request, setRequestParser }) => {
    if (request.method !== "POST") return
    setRequestParser(async (req) => {
      const type = (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase()
      if (type !== "application/json" && type !== "application/graphql+json")
        throw refusal(
          "Send GraphQL requests as POST with Content-Type application/json (or as GET with ?query=)",
          415,
          "BAD_REQUEST",
        )
      const text = await readLimited(req, limits.maxJsonBytes)
      if (jsonTextDepth(text, limits.maxJsonDepth + 2) > limits.maxJsonDepth + 2)
        throw refusal(
          `The request nests deeper than the limit of ${limits.maxJsonDepth} levels (MAX_JSON_DEPTH)`,
        )
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch (e) {
        throw refusal(
          `The request body is not valid JSON: ${e instanceof Error ? e.message : String(e)}`,
          400,
          "BAD_REQUEST",
        )
      }
      if (body === null || typeof body !== "object" || Array.isArray(body))
        throw refusal("The request body must be a JSON object with a query", 400, "BAD_REQUEST")
      return body as never
    })
  },
  onParams: ({ params }) => {
    const query = params.query
    if (typeof query === "string") {
      const problem = stringContentProblem(query)
      if (problem !== undefined) throw refusal(`Invalid query: ${problem}`)
      if (query.length > limits.maxJsonBytes)
        throw refusal(`The query is longer than the limit of ${limits.maxJsonBytes} characters`)
      const nesting = limits.maxJsonDepth + SELECTION_ALLOWANCE
      if (graphqlTextDepth(query, nesting) > nesting)
        throw refusal(`The query nests deeper than the limit of ${nesting} levels`)
    }
    const rules = { ...defaultInputLimits, maxDepth: limits.maxJsonDepth }
    const variables = inputIssue(params.variables ?? {}, rules)
    if (variables !== undefined) throw issueRefusal("variables", variables)
    const operationName = params.operationName
    if (typeof operationName === "string" && stringContentProblem(operationName) !== undefined)
      throw refusal("Invalid operationName")
    const extensions = inputIssue(params.extensions ?? {}, rules)
    if (extensions !== undefined) throw issueRefusal("extensions", extensions)
  },
  onValidate: ({ addValidationRule }) => {
    addValidationRule(stringLiterals)
  },
  // graphql-js refuses ill-typed arguments and variables itself (before any resolver runs), without a
  // code: a request refused whole is the client's mistake, so its errors say BAD_USER_INPUT.
  onResultProcess: ({ result, setResult }) => {
    if (Array.isArray(result) || Symbol.asyncIterator in (result as object)) return
    const single = result as ExecutionResult
    if (single.data != null || single.errors === undefined) return
    if (single.errors.every((e) => typeof e.extensions?.code === "string")) return
    setResult({
      ...single,
      errors: single.errors.map((e) =>
        typeof e.extensions?.code === "string"
          ? e
          : new GraphQLError(e.message, {
              nodes: e.nodes,
              positions: e.positions,
              path: e.path,
              extensions: { ...e.extensions, code: "BAD_USER_INPUT" },
            }),
      ),
    } as never)
  },
})
