/**
 * The syntax of a derived agent's prompt (see DerivedExpression.ts): the expression tree, the tokenizer and
 * recursive-descent parser, and the rewriting of common phrasings into an expression. References stand in
 * the text being read as placeholders, so the grammar never sees agent names. Pure.
 */
import type { PromptReference } from "./AgentReferences.ts"
import { collapseWhitespace } from "./Values.ts"

// ---------------------------------------------------------------------------------------------------------
// References

export type BinaryOperator =
  | "+"
  | "-"
  | "*"
  | "/"
  | "^"
  | ">"
  | "<"
  | ">="
  | "<="
  | "=="
  | "!="
  | "and"
  | "or"

export type Expression =
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

export type FunctionName = "sum" | "avg" | "min" | "max" | "count" | "round" | "abs" | "if"

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

export const parseSource = (source: string): Expression | undefined => {
  if (collapseWhitespace(source) === "") return undefined
  const tokens = tokenize(source)
  return tokens === undefined ? undefined : parse(tokens)
}

// ---------------------------------------------------------------------------------------------------------
// Natural-language phrasings

export const REF = `${REF_OPEN}\\d+${REF_CLOSE}`
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

// ---------------------------------------------------------------------------------------------------------
// Readings of a prompt

export const withPlaceholders = (prompt: string, references: ReadonlyArray<PromptReference>): string => {
  let text = ""
  let last = 0
  references.forEach((reference, index) => {
    text += prompt.slice(last, reference.start) + placeholder(index)
    last = reference.end
  })
  return text + prompt.slice(last)
}

/** The readings of a prompt to try, best first: as written, after a colon, then rephrased. */
export const candidates = (source: string): ReadonlyArray<string> => {
  const parts = [source]
  const first = source.indexOf(":")
  const last = source.lastIndexOf(":")
  if (first >= 0) parts.push(source.slice(first + 1))
  if (last > first) parts.push(source.slice(last + 1))
  return [...new Set([...parts, ...parts.map(rewritePhrasing)])]
}
