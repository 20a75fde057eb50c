/**
 * Limits on what a request may carry (DESIGN §4), and the pure checks every adapter applies to its raw
 * input before any work is done: nesting depth, string content (no NUL, well-formed Unicode), string
 * lengths and array lengths. Adapters decide how to answer (REST: 400/413 problem+json; GraphQL:
 * BAD_USER_INPUT); the rules live here once.
 */

/** Names of projects, folders, agents, dimensions, webhooks, keys: at most this many characters. */
export const MAX_NAME_LENGTH = 200
/** Instructions, prompts, descriptions and any other string of a request body: at most this many characters. */
export const MAX_TEXT_LENGTH = 20_000
/** Elements of any array in a request body. */
export const MAX_ARRAY_LENGTH = 10_000
/** Default nesting depth of JSON bodies, schemas, mappings and GraphQL variables. */
export const DEFAULT_MAX_JSON_DEPTH = 64
/** Default size of a JSON or form body, in bytes. */
export const DEFAULT_MAX_JSON_BYTES = 1024 * 1024

/** One thing wrong with an input, at a slash-separated path ("" for the whole input). */
export interface InputIssue {
  readonly path: string
  readonly message: string
}

/**
 * The deepest nesting of arrays and objects in a JSON text, counted without parsing it (so a hostile
 * text cannot exhaust the stack of a recursive reader). Stops at `limit + 1`: the answer only says
 * whether the limit is exceeded and by how much at least.
 */
export const jsonTextDepth = (text: string, limit = Number.POSITIVE_INFINITY): number => {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c /* \ */) i++
      else if (c === 0x22 /* " */) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth++
      if (depth > max) {
        max = depth
        if (max > limit) return max
      }
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--
  }
  return max
}

const NUL = "\u0000"
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** What is wrong with a string's content, or undefined: a NUL character, or a lone surrogate. */
export const stringContentProblem = (s: string): string | undefined => {
  if (s.includes(NUL)) return "must not contain NUL characters (\\u0000)"
  if (LONE_SURROGATE.test(s)) return "must be well-formed Unicode (it contains a lone surrogate)"
  return undefined
}

/** A JSON Pointer-like segment: `~` and `/` escaped as `~0` and `~1`. */
const segment = (key: string | number) =>
  typeof key === "number" ? String(key) : key.replace(/~/g, "~0").replace(/\//g, "~1")

const join = (path: string, key: string | number) => (path === "" ? segment(key) : `${path}/${segment(key)}`)

export interface InputLimits {
  readonly maxDepth: number
  readonly maxStringLength: number
  readonly maxArrayLength: number
}

export const defaultInputLimits: InputLimits = {
  maxDepth: DEFAULT_MAX_JSON_DEPTH,
  maxStringLength: MAX_TEXT_LENGTH,
  maxArrayLength: MAX_ARRAY_LENGTH,
}

/**
 * The first issue of a parsed input (a JSON body, form fields, GraphQL variables), depth first: nesting
 * deeper than allowed, a string (value or key) with NUL or ill-formed content or longer than allowed, an
 * array longer than allowed. Iterative, so depth is checked before it can hurt.
 */
export const inputIssue = (
  value: unknown,
  limits: InputLimits = defaultInputLimits,
): InputIssue | undefined => {
  const stack: Array<{ readonly value: unknown; readonly path: string; readonly depth: number }> = [
    { value, path: "", depth: 0 },
  ]
  while (stack.length > 0) {
    const item = stack.pop()!
    const v = item.value
    if (typeof v === "string") {
      const problem = stringContentProblem(v)
      if (problem !== undefined) return { path: item.path, message: problem }
      if (v.length > limits.maxStringLength)
        return { path: item.path, message: `must be at most ${limits.maxStringLength} characters` }
      continue
    }
    if (v === null || typeof v !== "object") continue
    const depth = item.depth + 1
    if (depth > limits.maxDepth)
      return { path: item.path, message: `nests deeper than the limit of ${limits.maxDepth} levels` }
    if (Array.isArray(v)) {
      if (v.length > limits.maxArrayLength)
        return { path: item.path, message: `must have at most ${limits.maxArrayLength} items` }
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: join(item.path, i), depth })
      continue
    }
    const entries = Object.entries(v as Record<string, unknown>)
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!
      const at = join(item.path, key)
      const keyProblem = stringContentProblem(key)
      if (keyProblem !== undefined) return { path: at, message: `field name ${keyProblem}` }
      if (key.length > limits.maxStringLength)
        return { path: at, message: `field name must be at most ${limits.maxStringLength} characters` }
      stack.push({ value: child, path: at, depth })
    }
  }
  return undefined
}

/** A name's issue: empty (after trimming), longer than MAX_NAME_LENGTH, or bad content. */
export const nameIssue = (name: string, path = "name"): InputIssue | undefined => {
  const problem = stringContentProblem(name)
  if (problem !== undefined) return { path, message: problem }
  if (name.trim() === "") return { path, message: "must not be empty" }
  if (name.length > MAX_NAME_LENGTH) return { path, message: `must be at most ${MAX_NAME_LENGTH} characters` }
  return undefined
}
