/**
 * How extraction work becomes model requests (one request per document window and group of agents), and
 * what those requests are expected to cost. The extraction stage sends requests shaped by these rules;
 * the launch preview estimates them with the same rules, so the two never disagree on the count.
 *
 * - A document's outstanding agents are split into groups of at most `maxAgentsPerRequest`.
 * - The document's pages go into windows whose estimated tokens fit the budget left by the context size
 *   once the instructions, the agents and the answer are accounted for. A document that fits is one window.
 * - Requests = groups × windows.
 */

/** Characters per token, the usual estimate for English text with the common tokenizers. */
export const CHARS_PER_TOKEN = 4

export const DEFAULT_MAX_AGENTS_PER_REQUEST = 20
/** Sized for 128k-context models. */
export const DEFAULT_CONTEXT_TOKENS = 128_000

/** The instructions and the document header of an extraction request, in tokens (estimated). */
export const INSTRUCTION_TOKENS = 400
/** Per agent: its name, instructions, examples, dimensions and its member of the answer's schema. */
export const AGENT_PROMPT_TOKENS = 150
/** Per agent: the answer's value, verbatim passage, page and reasoning. */
export const AGENT_ANSWER_TOKENS = 120
/** Around each page's text: its `--- Page N ---` marker. */
const PAGE_OVERHEAD_TOKENS = 8

export interface RequestBudget {
  readonly maxAgentsPerRequest: number
  readonly contextTokens: number
}

export const defaultRequestBudget: RequestBudget = {
  maxAgentsPerRequest: DEFAULT_MAX_AGENTS_PER_REQUEST,
  contextTokens: DEFAULT_CONTEXT_TOKENS,
}

export const estimateTokens = (characters: number): number => Math.ceil(characters / CHARS_PER_TOKEN)

/** The most characters whose tokens (`estimateTokens`) fit in `tokens`. */
export const charsWithin = (tokens: number): number => Math.max(0, Math.floor(tokens)) * CHARS_PER_TOKEN

/** The agents split into groups of at most `max` (at least one per group), in the given order. */
export const agentGroups = <A>(agents: ReadonlyArray<A>, max: number): ReadonlyArray<ReadonlyArray<A>> => {
  const size = Math.max(1, Math.floor(max))
  const groups: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < agents.length; i += size) groups.push(agents.slice(i, i + size))
  return groups
}

/** Tokens left for pages in a request for `agents` agents. Never below one page's worth (1,000 tokens). */
export const pageTokenBudget = (budget: RequestBudget, agents: number): number =>
  Math.max(
    1_000,
    budget.contextTokens - INSTRUCTION_TOKENS - agents * (AGENT_PROMPT_TOKENS + AGENT_ANSWER_TOKENS),
  )

export const pageTokens = (textLength: number): number => estimateTokens(textLength) + PAGE_OVERHEAD_TOKENS

/**
 * Pages (in the given order) split into consecutive windows whose tokens fit `tokenBudget`. A page larger
 * than the budget alone is a window of its own (the model server truncates or refuses it; the request
 * reports that). No pages: no windows.
 */
export const pageWindows = <P extends { readonly tokens: number }>(
  pages: ReadonlyArray<P>,
  tokenBudget: number,
): ReadonlyArray<ReadonlyArray<P>> => {
  const windows: Array<Array<P>> = []
  let current: Array<P> = []
  let used = 0
  for (const page of pages) {
    if (current.length > 0 && used + page.tokens > tokenBudget) {
      windows.push(current)
      current = []
      used = 0
    }
    current.push(page)
    used += page.tokens
  }
  if (current.length > 0) windows.push(current)
  return windows
}

export interface RequestEstimate {
  readonly requests: number
  readonly inputTokens: number
  readonly outputTokens: number
}

export const noRequests: RequestEstimate = { requests: 0, inputTokens: 0, outputTokens: 0 }

export const addEstimates = (a: RequestEstimate, b: RequestEstimate): RequestEstimate => ({
  requests: a.requests + b.requests,
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
})

/**
 * The requests extracting `agents` outstanding agents from one document whose pages have the given text
 * lengths would make, and their estimated tokens. Every window of a group is sent with the group's agents.
 */
export const estimateDocumentRequests = (
  pageTextLengths: ReadonlyArray<number>,
  agents: number,
  budget: RequestBudget = defaultRequestBudget,
): RequestEstimate => {
  if (agents <= 0 || pageTextLengths.length === 0) return noRequests
  let estimate = noRequests
  for (const group of agentGroups(
    Array.from({ length: agents }, (_, i) => i),
    budget.maxAgentsPerRequest,
  )) {
    const windows = pageWindows(
      pageTextLengths.map((length) => ({ tokens: pageTokens(length) })),
      pageTokenBudget(budget, group.length),
    )
    for (const window of windows) {
      const pages = window.reduce((n, p) => n + p.tokens, 0)
      estimate = addEstimates(estimate, {
        requests: 1,
        inputTokens: INSTRUCTION_TOKENS + pages + group.length * AGENT_PROMPT_TOKENS,
        outputTokens: group.length * AGENT_ANSWER_TOKENS,
      })
    }
  }
  return estimate
}
