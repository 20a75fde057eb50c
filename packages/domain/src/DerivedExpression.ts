/**
 * The local evaluator of derived and evaluation agents (DESIGN §8.5): arithmetic over `@Name` references
 * to resolved values, without a language model.
 *
 * A prompt is read as an expression — whole, or the part after a colon — with `+ - * / ^`, parentheses,
 * numbers (`15%` is 0.15), quoted text, `sum avg/average/mean min max count round abs if`, comparisons
 * `> < >= <= == !=` (1 when true, 0 when false) and `and or not`. Failing that, common phrasings are
 * rewritten into an expression ("difference between @A and @B", "@A divided by @B", "is @A greater than
 * @B", ...). A referenced agent with several resolved values (one per dimension instance) is a list that the
 * functions aggregate. A prompt that is none of these needs a language model, and the reasoning says so.
 */
import { findReferences, type PromptReference } from "./AgentReferences.ts"

export { findReferences, type PromptReference }

import {
  type Agent,
  agentOf,
  type Context,
  EvaluationFailure,
  evaluateScalar,
  isBooleanExpression,
  referenceItems,
  render,
  showNumber,
  showReference,
  showScalar,
} from "./DerivedExpressionEvaluation.ts"
import { candidates, type Expression, parseSource, REF, withPlaceholders } from "./DerivedExpressionSyntax.ts"
import { collapseWhitespace } from "./Values.ts"

export interface DerivedInput {
  /** The referenced agent's name. */
  readonly agentName: string
  /** Its resolved value for one dimension instance; null when it has none. */
  readonly value: string | null
  /** The dimension values of that instance, by dimension name. */
  readonly dimensionValues: Readonly<Record<string, string>>
}

export interface DerivedEvaluationInput {
  readonly prompt: string
  readonly isEvaluation: boolean
  readonly valueType: string
  readonly inputs: ReadonlyArray<DerivedInput>
}

export interface DerivedEvaluation {
  /** Canonical decimal for numbers, text for a text result; null when the prompt could not be evaluated. */
  readonly value: string | null
  /** The expression with the values substituted and the result, or why there is none. */
  readonly reasoning: string
}

export const NEEDS_LANGUAGE_MODEL =
  "The local provider evaluates arithmetic over @references (+ - * /, sum, avg, min, max, count, round, comparisons, and/or, if); this prompt needs a language model (configure LLM_PROVIDER=openai)."

const TEMPLATE_TEXT = /^[\s,;:\-–—/|().#&']*$/u

const evaluateTemplate = (
  prompt: string,
  references: ReadonlyArray<PromptReference>,
  context: Context,
  evenForNumbers: boolean,
): DerivedEvaluation | undefined => {
  if (references.length === 0) return undefined
  const between = withPlaceholders(prompt, references).split(new RegExp(REF, "g"))
  if (!between.every((text) => TEMPLATE_TEXT.test(text))) return undefined
  const shown = references.map((_, index) => showReference(context, index))
  const rendered = between.map((text, i) => text + (shown[i] ?? "")).join("")
  try {
    const values = references.map((_, index) => {
      const agent = agentOf(context, index)
      const items = referenceItems(context, index, false)
      if (items.length !== 1)
        throw new EvaluationFailure(
          `@${agent.name} has ${items.length} values, one per dimension instance; a text template needs exactly one`,
        )
      return items.some((item) => item.kind === "text")
        ? { text: (items[0] as { value: string }).value, number: false }
        : { text: showScalar(items[0]!), number: true }
    })
    if (!evenForNumbers && values.every((value) => value.number)) return undefined
    const value = collapseWhitespace(between.map((text, i) => text + (values[i]?.text ?? "")).join(""))
    return { value, reasoning: `${collapseWhitespace(rendered)} = ${JSON.stringify(value)}` }
  } catch (error) {
    if (error instanceof EvaluationFailure)
      return { value: null, reasoning: `${collapseWhitespace(rendered)}: ${error.reason}.` }
    throw error
  }
}

/**
 * Evaluates a derived or evaluation agent's prompt over the resolved values of the agents it references.
 * Numbers come out as canonical decimals; a `string` agent whose prompt only places references between
 * punctuation (`@First @Last`, `@City, @Country`) gets the text with the values substituted. Evaluation
 * agents always produce a number (comparisons give 1 or 0). Missing values, division by zero and prompts
 * that need a language model give a null value with the reason.
 */
export const evaluateDerived = (input: DerivedEvaluationInput): DerivedEvaluation => {
  const agents = new Map<string, Agent>()
  for (const item of input.inputs) {
    const key = item.agentName.toLowerCase()
    const agent = agents.get(key)
    agents.set(key, { name: agent?.name ?? item.agentName, instances: [...(agent?.instances ?? []), item] })
  }
  const prompt = input.prompt
  const references = findReferences(
    prompt,
    input.inputs.map((item) => item.agentName),
  )
  const context: Context = { references, agents }
  const wantsNumber = input.isEvaluation || input.valueType === "number"
  if (collapseWhitespace(prompt) === "") return { value: null, reasoning: "The prompt is empty." }

  // A text agent whose prompt places references between punctuation is a template when a value is text.
  if (!wantsNumber) {
    const template = evaluateTemplate(prompt, references, context, false)
    if (template) return template
  }

  const source = withPlaceholders(prompt, references)
  let expression: Expression | undefined
  for (const candidate of candidates(source)) {
    expression = parseSource(candidate)
    if (expression) break
  }
  if (expression === undefined && !wantsNumber) {
    const template = evaluateTemplate(prompt, references, context, true)
    if (template) return template
  }
  if (expression === undefined) {
    const prefix = input.isEvaluation
      ? "An evaluation agent scores its criterion as a number, and this criterion is not arithmetic. "
      : ""
    return { value: null, reasoning: `${prefix}${NEEDS_LANGUAGE_MODEL}` }
  }
  const rendered = render(context, expression)
  try {
    const result = evaluateScalar(context, expression)
    if (result.kind === "number") {
      if (!Number.isFinite(result.value)) throw new EvaluationFailure("the result is not a finite number")
      const value = showNumber(result.value)
      const truth = isBooleanExpression(expression) ? ` (${result.value !== 0})` : ""
      return { value, reasoning: `${rendered} = ${value}${truth}` }
    }
    if (wantsNumber) {
      throw new EvaluationFailure(
        `the result ${JSON.stringify(result.value)} is not a number, and ${input.isEvaluation ? "an evaluation agent" : "this agent"} needs one`,
      )
    }
    return { value: result.value, reasoning: `${rendered} = ${JSON.stringify(result.value)}` }
  } catch (error) {
    if (error instanceof EvaluationFailure) return { value: null, reasoning: `${rendered}: ${error.reason}.` }
    throw error
  }
}
