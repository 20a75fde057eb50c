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

import { canonicalDecimal, collapseWhitespace, parseNumber, valuesEqual } from "./Values.ts"

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

// ---------------------------------------------------------------------------------------------------------
// References

// ---------------------------------------------------------------------------------------------------------
// Expressions

type BinaryOperator = "+" | "-" | "*" | "/" | "^" | ">" | "<" | ">=" | "<=" | "==" | "!=" | "and" | "or"

type Expression =
  | { readonly type: "number"; readonly value: number; readonly text: string }
  | { readonly type: "text"; readonly value: string }
  | { readonly type: "reference"; readonly index: number }
  | { readonly type: "unary"; readonly operator: "-" | "not"; readonly operand: Expression }
  | {
      readonly type: "binary"
      readonly operator: BinaryOperator
      readonly left: Expression
      readonly right: Expression
    }
  | { readonly type: "call"; readonly name: FunctionName; readonly args: ReadonlyArray<Expression> }

type FunctionName = "sum" | "avg" | "min" | "max" | "count" | "round" | "abs" | "if"

const FUNCTIONS: Readonly<Record<string, FunctionName>> = {
  sum: "sum",
  total: "sum",
  avg: "avg",
  average: "avg",
  mean: "avg",
  min: "min",
  minimum: "min",
  max: "max",
  maximum: "max",
  count: "count",
  round: "round",
  abs: "abs",
  if: "if",
}

type Token =
  | { readonly kind: "number"; readonly value: number; readonly text: string }
  | { readonly kind: "text"; readonly value: string }
  | { readonly kind: "reference"; readonly index: number }
  | { readonly kind: "word"; readonly value: string }
  | { readonly kind: "symbol"; readonly value: string }

/** Placeholders standing for references inside a prompt being read. */
const REF_OPEN = "\uE000"
const REF_CLOSE = "\uE001"
const placeholder = (index: number) => `${REF_OPEN}${index}${REF_CLOSE}`

const SYMBOLS: ReadonlyArray<readonly [string, string]> = [
  [">=", ">="],
  ["<=", "<="],
  ["==", "=="],
  ["!=", "!="],
  ["<>", "!="],
  ["≠", "!="],
  ["≥", ">="],
  ["≤", "<="],
  ["&&", "and"],
  ["||", "or"],
  ["=", "=="],
  [">", ">"],
  ["<", "<"],
  ["+", "+"],
  ["-", "-"],
  ["−", "-"],
  ["–", "-"],
  ["*", "*"],
  ["×", "*"],
  ["·", "*"],
  ["/", "/"],
  ["÷", "/"],
  ["^", "^"],
  ["!", "not"],
  ["(", "("],
  [")", ")"],
  [",", ","],
]

const tokenize = (source: string): Array<Token> | undefined => {
  const tokens: Array<Token> = []
  let i = 0
  while (i < source.length) {
    const rest = source.slice(i)
    const space = /^\s+/.exec(rest)
    if (space) {
      i += space[0].length
      continue
    }
    const reference = new RegExp(`^${REF_OPEN}(\\d+)${REF_CLOSE}`).exec(rest)
    if (reference) {
      tokens.push({ kind: "reference", index: Number(reference[1]) })
      i += reference[0].length
      continue
    }
    const number = /^(\d+(?:\.\d+)?|\.\d+)(\s*%)?/.exec(rest)
    if (number) {
      const value = Number(number[1])
      tokens.push(
        number[2]
          ? { kind: "number", value: value / 100, text: `${number[1]}%` }
          : { kind: "number", value, text: number[1]! },
      )
      i += number[0].length
      continue
    }
    const text = /^"([^"]*)"|^'([^']*)'|^“([^”]*)”/.exec(rest)
    if (text) {
      tokens.push({ kind: "text", value: text[1] ?? text[2] ?? text[3] ?? "" })
      i += text[0].length
      continue
    }
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest)
    if (word) {
      tokens.push({ kind: "word", value: word[0].toLowerCase() })
      i += word[0].length
      continue
    }
    const symbol = SYMBOLS.find(([written]) => rest.startsWith(written))
    if (symbol === undefined) return undefined
    tokens.push({ kind: "symbol", value: symbol[1] })
    i += symbol[0].length
  }
  return tokens
}

class ParseFailure {
  readonly _tag = "ParseFailure"
}

/** Recursive descent over the tokens; undefined when they are not one expression. */
const parse = (tokens: ReadonlyArray<Token>): Expression | undefined => {
  let position = 0
  const peek = (): Token | undefined => tokens[position]
  const isOperator = (token: Token | undefined, ...values: ReadonlyArray<string>): boolean =>
    token !== undefined && (token.kind === "symbol" || token.kind === "word") && values.includes(token.value)
  const expect = (value: string) => {
    if (!isOperator(peek(), value)) throw new ParseFailure()
    position += 1
  }
  const binaryLevel =
    (operators: ReadonlyArray<string>, next: () => Expression, single = false) =>
    (): Expression => {
      let left = next()
      while (isOperator(peek(), ...operators)) {
        const operator = (peek() as { value: string }).value as BinaryOperator
        position += 1
        left = { type: "binary", operator, left, right: next() }
        if (single) break
      }
      return left
    }
  const primary = (): Expression => {
    const token = peek()
    if (token === undefined) throw new ParseFailure()
    position += 1
    switch (token.kind) {
      case "number":
        return { type: "number", value: token.value, text: token.text }
      case "text":
        return { type: "text", value: token.value }
      case "reference":
        return { type: "reference", index: token.index }
      case "word": {
        if (token.value === "true" || token.value === "false")
          return { type: "number", value: token.value === "true" ? 1 : 0, text: token.value }
        const name = FUNCTIONS[token.value]
        if (name === undefined || !isOperator(peek(), "(")) throw new ParseFailure()
        position += 1
        const args: Array<Expression> = []
        if (!isOperator(peek(), ")")) {
          args.push(expression())
          while (isOperator(peek(), ",")) {
            position += 1
            args.push(expression())
          }
        }
        expect(")")
        return { type: "call", name, args }
      }
      case "symbol": {
        if (token.value !== "(") throw new ParseFailure()
        const inner = expression()
        expect(")")
        return inner
      }
    }
  }
  const unary = (): Expression => {
    const token = peek()
    if (isOperator(token, "-", "not")) {
      position += 1
      return { type: "unary", operator: (token as { value: "-" | "not" }).value, operand: unary() }
    }
    if (isOperator(token, "+")) {
      position += 1
      return unary()
    }
    return power()
  }
  const power = (): Expression => {
    const base = primary()
    if (isOperator(peek(), "^")) {
      position += 1
      return { type: "binary", operator: "^", left: base, right: unary() }
    }
    return base
  }
  const multiplicative = binaryLevel(["*", "/"], unary)
  const additive = binaryLevel(["+", "-"], multiplicative)
  const comparison = binaryLevel([">", "<", ">=", "<=", "==", "!="], additive, true)
  const conjunction = binaryLevel(["and"], comparison)
  const disjunction = binaryLevel(["or"], conjunction)
  const expression = disjunction
  try {
    const result = expression()
    return position === tokens.length ? result : undefined
  } catch (error) {
    if (error instanceof ParseFailure) return undefined
    throw error
  }
}

const parseSource = (source: string): Expression | undefined => {
  if (collapseWhitespace(source) === "") return undefined
  const tokens = tokenize(source)
  return tokens === undefined ? undefined : parse(tokens)
}

// ---------------------------------------------------------------------------------------------------------
// Natural-language phrasings

const REF = `${REF_OPEN}\\d+${REF_CLOSE}`
const NUM = `(?<![${REF_OPEN}\\d.])\\d+(?:\\.\\d+)?%?`
const OPERAND = `(?:${REF}|${NUM}|[a-z]+\\([^()]*\\)|\\([^()]*\\))`
const LIST = `${OPERAND}(?:(?:\\s*,\\s*(?:and\\s+)?|\\s+and\\s+|\\s*&\\s*)${OPERAND})*`

const splitList = (list: string): Array<string> => {
  const operands = new RegExp(OPERAND, "g")
  return [...list.matchAll(operands)].map((match) => match[0])
}

const AGGREGATE_WORDS: ReadonlyArray<readonly [string, string]> = [
  ["sum|total", "sum"],
  ["average|avg|mean", "avg"],
  ["maximum|max|highest|largest|greatest", "max"],
  ["minimum|min|lowest|smallest", "min"],
  ["count|number", "count"],
]

const COMPARISON_WORDS: ReadonlyArray<readonly [string, string]> = [
  ["greater than or equal to|more than or equal to|at least|no less than", ">="],
  ["less than or equal to|at most|no more than", "<="],
  ["not equal to|different from|not the same as", "!="],
  ["greater than|more than|higher than|larger than|bigger than|above|exceeds|exceed", ">"],
  ["less than|lower than|smaller than|below", "<"],
  ["equal to|equals|equal|the same as", "=="],
  ["plus", "+"],
  ["minus|less", "-"],
  ["times|multiplied by", "*"],
  ["divided by", "/"],
]

const FILLER =
  /^(?:\s*(?:what|what's|whats|is|are|does|do|calculate|compute|evaluate|return|give|get|find|determine|show|output|the|a|value|result|of|me|please|check|whether|tell|how|much|many|answer|formula|expression)\b)+/

/** Rewrites common phrasings into an expression; the input has references as placeholders. */
const rewritePhrasing = (source: string): string => {
  let text = collapseWhitespace(source).toLowerCase()
  text = text.replace(new RegExp(`(${NUM.replace("%?", "")})\\s*(?:percent|per cent|pct)\\b`, "g"), "$1%")
  const rules: ReadonlyArray<readonly [RegExp, (...groups: Array<string>) => string]> = [
    [
      new RegExp(`(?:the\\s+)?difference between (${OPERAND}) and (${OPERAND})`, "g"),
      (_, a, b) => `(${a} - ${b})`,
    ],
    [
      new RegExp(`(?:the\\s+)?ratio (?:of|between) (${OPERAND}) (?:to|and) (${OPERAND})`, "g"),
      (_, a, b) => `(${a} / ${b})`,
    ],
    [
      new RegExp(
        `(?:the\\s+)?(?:percentage|percent|share) of (${OPERAND}) (?:in|of|relative to|out of|from|to) (${OPERAND})`,
        "g",
      ),
      (_, a, b) => `(${a} / ${b} * 100)`,
    ],
    [
      new RegExp(`(${OPERAND}) as an? (?:percentage|percent|share) of (${OPERAND})`, "g"),
      (_, a, b) => `(${a} / ${b} * 100)`,
    ],
    [new RegExp(`(?:the\\s+)?product of (${OPERAND}) and (${OPERAND})`, "g"), (_, a, b) => `(${a} * ${b})`],
    [new RegExp(`(?<=^|[^\\w])(${NUM.replace("%?", "")}%) of (?=${OPERAND})`, "g"), (_, a) => `${a} * `],
    ...AGGREGATE_WORDS.map(
      ([words, fn]) =>
        [
          new RegExp(
            `(?:the\\s+)?(?:${words})\\s+(?:value\\s+|amount\\s+)?of\\s+(?:the\\s+)?(?:values\\s+of\\s+)?(${LIST})`,
            "g",
          ),
          (_: string, list: string) => {
            const items = splitList(list)
            return fn === "sum" && items.length > 1 ? `(${items.join(" + ")})` : `${fn}(${items.join(", ")})`
          },
        ] as const,
    ),
  ]
  for (const [pattern, replace] of rules)
    text = text.replace(pattern, replace as (...args: Array<any>) => string)
  for (const [words, symbol] of COMPARISON_WORDS) {
    text = text.replace(new RegExp(`(?:\\b(?:is|are)\\s+)?\\b(?:${words})\\b`, "g"), ` ${symbol} `)
  }
  text = text.replace(FILLER, "").replace(/[\s?.!]+$/, "")
  return collapseWhitespace(text)
}

// ---------------------------------------------------------------------------------------------------------
// Evaluation

type Scalar =
  | { readonly kind: "number"; readonly value: number }
  | { readonly kind: "text"; readonly value: string }
type Value = Scalar | { readonly kind: "list"; readonly items: ReadonlyArray<Scalar> }

class EvaluationFailure {
  readonly _tag = "EvaluationFailure"
  constructor(
    readonly reason: string,
    readonly notANumber = false,
  ) {}
}

interface Agent {
  readonly name: string
  readonly instances: ReadonlyArray<DerivedInput>
}

interface Context {
  readonly references: ReadonlyArray<PromptReference>
  readonly agents: ReadonlyMap<string, Agent>
}

const agentOf = (context: Context, index: number): Agent => {
  const reference = context.references[index]!
  const agent =
    reference.agentName === null ? undefined : context.agents.get(reference.agentName.toLowerCase())
  if (agent === undefined)
    throw new EvaluationFailure(`@${reference.written} is not one of the agents this prompt references`)
  return agent
}

const scalarOf = (raw: string): Scalar => {
  const n = parseNumber(raw)
  return n === undefined ? { kind: "text", value: collapseWhitespace(raw) } : { kind: "number", value: n }
}

const instanceLabel = (instance: DerivedInput): string => {
  const entries = Object.entries(instance.dimensionValues)
  return entries.length === 0
    ? "no dimensions"
    : entries.map(([name, value]) => `${name}: ${value}`).join(", ")
}

/** The values of a referenced agent; missing values fail unless `skipMissing`. */
const referenceItems = (context: Context, index: number, skipMissing: boolean): Array<Scalar> => {
  const agent = agentOf(context, index)
  const items: Array<Scalar> = []
  for (const instance of agent.instances) {
    if (instance.value === null || collapseWhitespace(instance.value) === "") {
      if (skipMissing) continue
      const where = agent.instances.length > 1 ? ` for ${instanceLabel(instance)}` : ""
      throw new EvaluationFailure(`@${agent.name} has no value${where}, so there is no result`)
    }
    items.push(scalarOf(instance.value))
  }
  return items
}

const showNumber = (n: number): string => canonicalDecimal(n)

const asNumber = (value: Scalar, what: string): number => {
  if (value.kind === "number") return value.value
  throw new EvaluationFailure(`${what} is not a number (${JSON.stringify(value.value)})`, true)
}

const truthy = (value: Scalar): boolean => (value.kind === "number" ? value.value !== 0 : value.value !== "")

const describeOperand = (context: Context, expression: Expression): string =>
  expression.type === "reference" ? `@${agentOf(context, expression.index).name}` : "a value"

const evaluateScalar = (context: Context, expression: Expression): Scalar => {
  const value = evaluate(context, expression)
  if (value.kind !== "list") return value
  if (value.items.length === 1) return value.items[0]!
  const name = describeOperand(context, expression)
  const instances =
    expression.type === "reference" ? agentOf(context, expression.index).instances.map(instanceLabel) : []
  const detail = instances.length > 0 ? `, one per dimension instance (${instances.join("; ")})` : ""
  throw new EvaluationFailure(
    `${name} has ${value.items.length} values${detail}; combine them with sum(), avg(), min(), max() or count() before using it as a single number`,
  )
}

const evaluateNumber = (context: Context, expression: Expression): number =>
  asNumber(evaluateScalar(context, expression), describeOperand(context, expression))

const bool = (condition: boolean): Scalar => ({ kind: "number", value: condition ? 1 : 0 })

const roundTo = (n: number, digits: number): number => {
  const shifted = Math.round(Number(`${Math.abs(n)}e${digits}`))
  const result = Number(`${shifted}e${-digits}`) * Math.sign(n)
  return Object.is(result, -0) ? 0 : result
}

const aggregateItems = (
  context: Context,
  args: ReadonlyArray<Expression>,
  skipMissing: boolean,
): Array<Scalar> =>
  args.flatMap((arg) => {
    if (arg.type === "reference") return referenceItems(context, arg.index, skipMissing)
    const value = evaluate(context, arg)
    return value.kind === "list" ? [...value.items] : [value]
  })

const callFunction = (context: Context, name: FunctionName, args: ReadonlyArray<Expression>): Value => {
  const arity = (min: number, max: number) => {
    if (args.length < min || args.length > max)
      throw new EvaluationFailure(
        `${name}() takes ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? "" : "s"}`,
      )
  }
  switch (name) {
    case "if": {
      arity(3, 3)
      return truthy(evaluateScalar(context, args[0]!))
        ? evaluate(context, args[1]!)
        : evaluate(context, args[2]!)
    }
    case "round": {
      arity(1, 2)
      const digits = args.length > 1 ? evaluateNumber(context, args[1]!) : 0
      if (!Number.isInteger(digits) || Math.abs(digits) > 15)
        throw new EvaluationFailure("round() needs a whole number of digits between -15 and 15")
      return { kind: "number", value: roundTo(evaluateNumber(context, args[0]!), digits) }
    }
    case "abs":
      arity(1, 1)
      return { kind: "number", value: Math.abs(evaluateNumber(context, args[0]!)) }
    case "count":
      arity(1, Number.POSITIVE_INFINITY)
      return { kind: "number", value: aggregateItems(context, args, true).length }
    default: {
      arity(1, Number.POSITIVE_INFINITY)
      const numbers = aggregateItems(context, args, false).map((item) =>
        asNumber(item, `A value of ${name}()`),
      )
      if (numbers.length === 0) throw new EvaluationFailure(`${name}() has no values`)
      const total = numbers.reduce((a, b) => a + b, 0)
      const value =
        name === "sum"
          ? total
          : name === "avg"
            ? total / numbers.length
            : name === "min"
              ? Math.min(...numbers)
              : Math.max(...numbers)
      return { kind: "number", value }
    }
  }
}

const evaluate = (context: Context, expression: Expression): Value => {
  switch (expression.type) {
    case "number":
      return { kind: "number", value: expression.value }
    case "text":
      return { kind: "text", value: expression.value }
    case "reference": {
      const agent = agentOf(context, expression.index)
      const items = referenceItems(context, expression.index, false)
      return agent.instances.length === 1 ? items[0]! : { kind: "list", items }
    }
    case "unary":
      return expression.operator === "-"
        ? { kind: "number", value: -evaluateNumber(context, expression.operand) }
        : bool(!truthy(evaluateScalar(context, expression.operand)))
    case "call":
      return callFunction(context, expression.name, expression.args)
    case "binary": {
      const { operator } = expression
      if (operator === "and" || operator === "or") {
        const left = truthy(evaluateScalar(context, expression.left))
        if (operator === "and" ? !left : left) return bool(left)
        return bool(truthy(evaluateScalar(context, expression.right)))
      }
      if (operator === "==" || operator === "!=") {
        const left = evaluateScalar(context, expression.left)
        const right = evaluateScalar(context, expression.right)
        const equal =
          left.kind === "number" && right.kind === "number"
            ? Math.abs(left.value - right.value) <=
              1e-9 * Math.max(1, Math.abs(left.value), Math.abs(right.value))
            : valuesEqual(
                "string",
                left.kind === "number" ? showNumber(left.value) : left.value,
                right.kind === "number" ? showNumber(right.value) : right.value,
              )
        return bool(operator === "==" ? equal : !equal)
      }
      const left = evaluateNumber(context, expression.left)
      const right = evaluateNumber(context, expression.right)
      switch (operator) {
        case "+":
          return { kind: "number", value: left + right }
        case "-":
          return { kind: "number", value: left - right }
        case "*":
          return { kind: "number", value: left * right }
        case "/":
          if (right === 0) throw new EvaluationFailure("division by zero, so there is no result")
          return { kind: "number", value: left / right }
        case "^": {
          const value = left ** right
          if (!Number.isFinite(value)) throw new EvaluationFailure("the power is not a finite number")
          return { kind: "number", value }
        }
        case ">":
          return bool(left > right)
        case "<":
          return bool(left < right)
        case ">=":
          return bool(left >= right)
        case "<=":
          return bool(left <= right)
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Rendering

const PRECEDENCE: Readonly<Record<BinaryOperator, number>> = {
  or: 1,
  and: 2,
  ">": 3,
  "<": 3,
  ">=": 3,
  "<=": 3,
  "==": 3,
  "!=": 3,
  "+": 4,
  "-": 4,
  "*": 5,
  "/": 5,
  "^": 7,
}

const showScalar = (value: Scalar): string =>
  value.kind === "number" ? showNumber(value.value) : JSON.stringify(value.value)

const showReference = (context: Context, index: number): string => {
  const reference = context.references[index]!
  const agent =
    reference.agentName === null ? undefined : context.agents.get(reference.agentName.toLowerCase())
  if (agent === undefined) return `@${reference.written} (unknown)`
  const values = agent.instances.map((instance) =>
    instance.value === null || collapseWhitespace(instance.value) === ""
      ? "no value"
      : showScalar(scalarOf(instance.value)),
  )
  return `@${agent.name} (${values.length === 0 ? "no value" : values.join(", ")})`
}

/** The expression as text with every reference followed by its value(s). */
const render = (context: Context, expression: Expression, parent = 0, rightSide = false): string => {
  switch (expression.type) {
    case "number":
      return expression.text
    case "text":
      return JSON.stringify(expression.value)
    case "reference":
      return showReference(context, expression.index)
    case "unary": {
      const inner = render(context, expression.operand, 6)
      const text = expression.operator === "-" ? `-${inner}` : `not ${inner}`
      return parent > 6 ? `(${text})` : text
    }
    case "call":
      return `${expression.name}(${expression.args.map((arg) => render(context, arg)).join(", ")})`
    case "binary": {
      const precedence = PRECEDENCE[expression.operator]
      const right = expression.operator === "^" ? precedence - 1 : precedence
      const text = `${render(context, expression.left, expression.operator === "^" ? precedence + 1 : precedence)} ${expression.operator} ${render(context, expression.right, right, true)}`
      const needs = precedence < parent || (precedence === parent && rightSide)
      return needs ? `(${text})` : text
    }
  }
}

const isBooleanExpression = (expression: Expression): boolean =>
  (expression.type === "binary" && PRECEDENCE[expression.operator] <= 3) ||
  (expression.type === "unary" && expression.operator === "not")

// ---------------------------------------------------------------------------------------------------------
// Entry point

const withPlaceholders = (prompt: string, references: ReadonlyArray<PromptReference>): string => {
  let text = ""
  let last = 0
  references.forEach((reference, index) => {
    text += prompt.slice(last, reference.start) + placeholder(index)
    last = reference.end
  })
  return text + prompt.slice(last)
}

/** The readings of a prompt to try, best first: as written, after a colon, then rephrased. */
const candidates = (source: string): ReadonlyArray<string> => {
  const parts = [source]
  const first = source.indexOf(":")
  const last = source.lastIndexOf(":")
  if (first >= 0) parts.push(source.slice(first + 1))
  if (last > first) parts.push(source.slice(last + 1))
  return [...new Set([...parts, ...parts.map(rewritePhrasing)])]
}

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
