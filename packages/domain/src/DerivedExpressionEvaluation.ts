/**
 * The evaluation of a parsed derived-agent expression (see DerivedExpression.ts) over the resolved values
 * of the agents it references, and its rendering as text with those values shown. Failures (a missing
 * value, a division by zero, text where a number is needed) are thrown as `EvaluationFailure` and caught
 * by the entry point, which turns them into a reason. Pure.
 */
import type { PromptReference } from "./AgentReferences.ts"
import type { DerivedInput } from "./DerivedExpression.ts"
import type { BinaryOperator, Expression, FunctionName } from "./DerivedExpressionSyntax.ts"
import { canonicalDecimal, collapseWhitespace, parseNumber, valuesEqual } from "./Values.ts"

export type Scalar =
  | { readonly kind: "number"; readonly value: number }
  | { readonly kind: "text"; readonly value: string }
type Value = Scalar | { readonly kind: "list"; readonly items: ReadonlyArray<Scalar> }

export class EvaluationFailure {
  readonly _tag = "EvaluationFailure"
  constructor(
    readonly reason: string,
    readonly notANumber = false,
  ) {}
}

export interface Agent {
  readonly name: string
  readonly instances: ReadonlyArray<DerivedInput>
}

export interface Context {
  readonly references: ReadonlyArray<PromptReference>
  readonly agents: ReadonlyMap<string, Agent>
}

export const agentOf = (context: Context, index: number): Agent => {
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
export const referenceItems = (context: Context, index: number, skipMissing: boolean): Array<Scalar> => {
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

export const showNumber = (n: number): string => canonicalDecimal(n)

const asNumber = (value: Scalar, what: string): number => {
  if (value.kind === "number") return value.value
  throw new EvaluationFailure(`${what} is not a number (${JSON.stringify(value.value)})`, true)
}

const truthy = (value: Scalar): boolean => (value.kind === "number" ? value.value !== 0 : value.value !== "")

const describeOperand = (context: Context, expression: Expression): string =>
  expression.type === "reference" ? `@${agentOf(context, expression.index).name}` : "a value"

export const evaluateScalar = (context: Context, expression: Expression): Scalar => {
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

export const showScalar = (value: Scalar): string =>
  value.kind === "number" ? showNumber(value.value) : JSON.stringify(value.value)

export const showReference = (context: Context, index: number): string => {
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
export const render = (context: Context, expression: Expression, parent = 0, rightSide = false): string => {
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

export const isBooleanExpression = (expression: Expression): boolean =>
  (expression.type === "binary" && PRECEDENCE[expression.operator] <= 3) ||
  (expression.type === "unary" && expression.operator === "not")

// ---------------------------------------------------------------------------------------------------------
// Entry point
