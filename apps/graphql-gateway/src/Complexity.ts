/**
 * A cost limit beside the depth limit: every field costs 1, and the fields under a list are counted once
 * per expected element (the `limit` argument when given, else `LIST_ESTIMATE`). An operation whose cost
 * exceeds the limit is refused before anything runs, with the code `COMPLEXITY_LIMIT_EXCEEDED`.
 */
import {
  type ASTVisitor,
  type FragmentDefinitionNode,
  GraphQLError,
  type GraphQLNamedType,
  getNamedType,
  getNullableType,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValueNode,
} from "graphql"

/** Elements assumed for a list without a `limit` argument. */
export const LIST_ESTIMATE = 20
export const MAX_COST = 50_000

const limitOf = (args: ReadonlyArray<{ name: { value: string }; value: ValueNode }> | undefined) => {
  const limit = args?.find((a) => a.name.value === "limit")?.value
  return limit?.kind === Kind.INT ? Math.max(1, Number(limit.value)) : undefined
}

const costOf = (
  set: SelectionSetNode | undefined,
  type: GraphQLNamedType | undefined,
  fragment: (name: string) => FragmentDefinitionNode | null | undefined,
  seen: ReadonlySet<string>,
  context: ValidationContext,
  pageLimit?: number,
): number => {
  if (!set || type === undefined) return 0
  let cost = 0
  for (const selection of set.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value.startsWith("__")) continue
      const field =
        isObjectType(type) || isInterfaceType(type) ? type.getFields()[selection.name.value] : undefined
      if (field === undefined) continue
      const list = isListType(getNullableType(field.type))
      const limit = limitOf(selection.arguments)
      // A page's rows (`results`, `data`) are counted by the `limit` given on the page's own field.
      const per = list ? (limit ?? pageLimit ?? LIST_ESTIMATE) : 1
      const below = costOf(
        selection.selectionSet,
        getNamedType(field.type),
        fragment,
        seen,
        context,
        list ? undefined : limit,
      )
      cost += 1 + per * below
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      const on = selection.typeCondition
        ? (context.getSchema().getType(selection.typeCondition.name.value) ?? undefined)
        : type
      cost += costOf(selection.selectionSet, on, fragment, seen, context, pageLimit)
    } else {
      const name = selection.name.value
      if (seen.has(name)) continue
      const f = fragment(name)
      if (f) {
        const on = context.getSchema().getType(f.typeCondition.name.value) ?? undefined
        cost += costOf(f.selectionSet, on, fragment, new Set([...seen, name]), context, pageLimit)
      }
    }
  }
  return cost
}

/** The estimated cost of an operation (see the module comment). */
export const operationCost = (node: OperationDefinitionNode, context: ValidationContext): number => {
  const schema = context.getSchema()
  const root =
    node.operation === "query"
      ? schema.getQueryType()
      : node.operation === "mutation"
        ? schema.getMutationType()
        : schema.getSubscriptionType()
  return costOf(node.selectionSet, root ?? undefined, (name) => context.getFragment(name), new Set(), context)
}

/** A validation rule rejecting operations that cost more than `max`. */
export const complexityLimit =
  (max: number) =>
  (context: ValidationContext): ASTVisitor => ({
    OperationDefinition(node: OperationDefinitionNode) {
      const cost = operationCost(node, context)
      if (cost > max)
        context.reportError(
          new GraphQLError(
            `The query would cost ${cost} (fields, counting ${LIST_ESTIMATE} elements per list without a limit argument); the limit is ${max}`,
            { nodes: [node], extensions: { code: "COMPLEXITY_LIMIT_EXCEEDED" } },
          ),
        )
    },
  })
