/**
 * References between agents:
 * - resolving a derived agent's `derived_agent_references` against the project's agents,
 * - finding `@Name` mentions in a `derived_prompt`,
 * - cycle detection and dependency order over an agent dependency graph.
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"

export interface AgentIdentity {
  readonly id: string
  readonly name: string
}

/** A reference as written: either or both members may be given. */
export interface AgentReference {
  readonly agent_id?: string | null | undefined
  readonly agent_name?: string | null | undefined
}

const describeReference = (reference: AgentReference): string => {
  const parts = [
    reference.agent_id ? `agent_id ${JSON.stringify(reference.agent_id)}` : undefined,
    reference.agent_name ? `agent_name ${JSON.stringify(reference.agent_name)}` : undefined,
  ].filter((part) => part !== undefined)
  return parts.length === 0 ? "an empty agent reference" : parts.join(" / ")
}

export class UnknownAgentReference extends Data.TaggedError("UnknownAgentReference")<{
  readonly reference: AgentReference
  readonly message: string
}> {
  static of(reference: AgentReference): UnknownAgentReference {
    const message =
      reference.agent_id || reference.agent_name
        ? `No agent in the project matches ${describeReference(reference)}`
        : "An agent reference needs an agent_id or an agent_name"
    return new UnknownAgentReference({ reference, message })
  }
}

export class AmbiguousAgentReference extends Data.TaggedError("AmbiguousAgentReference")<{
  readonly reference: AgentReference
  readonly candidateIds: ReadonlyArray<string>
  readonly message: string
}> {
  static of(reference: AgentReference, candidateIds: ReadonlyArray<string>): AmbiguousAgentReference {
    const message = `${describeReference(reference)} is ambiguous: ${candidateIds.length} agents share the name ${JSON.stringify(reference.agent_name)}`
    return new AmbiguousAgentReference({ reference, candidateIds, message })
  }
}

export type AgentReferenceError = UnknownAgentReference | AmbiguousAgentReference

/**
 * Resolves one reference: `agent_id` first (it must be an agent of the list), then the exact `agent_name`
 * (the portable identifier, so an id from another project falls back to the name).
 */
export const resolveAgentReference = <A extends AgentIdentity>(
  reference: AgentReference,
  agents: ReadonlyArray<A>,
): Either.Either<A, AgentReferenceError> => {
  const byId = reference.agent_id ? agents.find((agent) => agent.id === reference.agent_id) : undefined
  if (byId !== undefined) return Either.right(byId)
  const name = reference.agent_name
  const byName = name ? agents.filter((agent) => agent.name === name) : []
  const [only, ...others] = byName
  if (only === undefined) return Either.left(UnknownAgentReference.of(reference))
  if (others.length > 0) {
    return Either.left(
      AmbiguousAgentReference.of(
        reference,
        byName.map((agent) => agent.id),
      ),
    )
  }
  return Either.right(only)
}

/**
 * Resolves every reference; fails with the first that does not resolve. Agents referenced more than once
 * appear once, in order of first reference.
 */
export const resolveAgentReferences = <A extends AgentIdentity>(
  references: ReadonlyArray<AgentReference>,
  agents: ReadonlyArray<A>,
): Either.Either<ReadonlyArray<A>, AgentReferenceError> => {
  const resolved = new Map<string, A>()
  for (const reference of references) {
    const result = resolveAgentReference(reference, agents)
    if (Either.isLeft(result)) return Either.left(result.left)
    if (!resolved.has(result.right.id)) resolved.set(result.right.id, result.right)
  }
  return Either.right([...resolved.values()])
}

// ---------------------------------------------------------------------------------------------------------
// @Name mentions

export interface Mention {
  /** The referenced name, trimmed. */
  readonly name: string
  /** Offset of the `@` in the prompt. */
  readonly start: number
  /** Offset just after the mention (after the closing quote or bracket for long names). */
  readonly end: number
}

/**
 * `@"Long Name"`, `@[Long Name]` or `@Word`. A plain word is letters, digits and `_`, so it stops at
 * whitespace and punctuation (`@A-@B` mentions `A` and `B`). The `@` must not follow a letter, digit or
 * `_`, so an e-mail address is not a mention.
 */
const mentionPattern = /(?<![\p{L}\p{N}_])@(?:"([^"\n]*)"|\[([^\]\n]*)\]|([\p{L}\p{N}_]+))/gu

/** Every mention in a prompt, in order of appearance. Empty quoted or bracketed names are not mentions. */
export const findMentions = (prompt: string): ReadonlyArray<Mention> => {
  const mentions: Array<Mention> = []
  for (const match of prompt.matchAll(mentionPattern)) {
    const name = (match[1] ?? match[2] ?? match[3] ?? "").trim()
    if (name === "") continue
    mentions.push({ name, start: match.index, end: match.index + match[0].length })
  }
  return mentions
}

/** The distinct names mentioned in a prompt, in order of first appearance. */
export const mentionedNames = (prompt: string): ReadonlyArray<string> => [
  ...new Set(findMentions(prompt).map((mention) => mention.name)),
]

// ---------------------------------------------------------------------------------------------------------
// Dependency graphs

/**
 * A dependency graph: each node maps to the nodes it depends on. A dependency that is not itself a key has
 * no dependencies (for derived agents: an extraction agent).
 */
export type DependencyGraph = ReadonlyMap<string, ReadonlyArray<string>>

/** Builds a graph from a record or from entries. */
export const dependencyGraph = (
  input: Readonly<Record<string, ReadonlyArray<string>>> | Iterable<readonly [string, ReadonlyArray<string>]>,
): DependencyGraph =>
  new Map(Symbol.iterator in input ? input : Object.entries(input as Record<string, ReadonlyArray<string>>))

const dependenciesOf = (graph: DependencyGraph, node: string): ReadonlyArray<string> => graph.get(node) ?? []

/**
 * A cycle of the graph as a closed path `[a, b, ..., a]` where each node depends on the next, or
 * `undefined` when the graph is acyclic. A node depending on itself gives `[a, a]`. Deterministic: nodes
 * and dependencies are visited in insertion order.
 */
export const findCycle = (graph: DependencyGraph): ReadonlyArray<string> | undefined => {
  const done = new Set<string>()
  for (const root of graph.keys()) {
    if (done.has(root)) continue
    // Iterative depth-first search; `path` is the current chain, `onPath` its members by position.
    const path: Array<{ node: string; next: number }> = [{ node: root, next: 0 }]
    const onPath = new Map<string, number>([[root, 0]])
    while (path.length > 0) {
      const top = path[path.length - 1]!
      const dependency = dependenciesOf(graph, top.node)[top.next]
      if (dependency === undefined) {
        path.pop()
        onPath.delete(top.node)
        done.add(top.node)
        continue
      }
      top.next += 1
      const position = onPath.get(dependency)
      if (position !== undefined) {
        return [...path.slice(position).map((frame) => frame.node), dependency]
      }
      if (!done.has(dependency)) {
        onPath.set(dependency, path.length)
        path.push({ node: dependency, next: 0 })
      }
    }
  }
  return undefined
}

export class DependencyCycle extends Data.TaggedError("DependencyCycle")<{
  readonly cycle: ReadonlyArray<string>
  readonly message: string
}> {
  static of(cycle: ReadonlyArray<string>, label: (node: string) => string = (node) => node): DependencyCycle {
    return new DependencyCycle({ cycle, message: `Dependency cycle: ${cycle.map(label).join(" -> ")}` })
  }
}

/**
 * The keys of the graph ordered so that every node comes after the keys it depends on (dependencies that
 * are not keys are ignored). At each step the first node in insertion order whose dependencies are placed
 * comes next, so an already ordered graph keeps its order.
 * Fails with the cycle when there is one.
 */
export const topologicalOrder = (
  graph: DependencyGraph,
): Either.Either<ReadonlyArray<string>, DependencyCycle> => {
  const cycle = findCycle(graph)
  if (cycle !== undefined) return Either.left(DependencyCycle.of(cycle))
  const order: Array<string> = []
  const placed = new Set<string>()
  const isReady = (node: string) =>
    !placed.has(node) &&
    dependenciesOf(graph, node).every((dependency) => placed.has(dependency) || !graph.has(dependency))
  // Acyclic, so some node is always ready; take the first in insertion order.
  for (
    let next = [...graph.keys()].find(isReady);
    next !== undefined;
    next = [...graph.keys()].find(isReady)
  ) {
    placed.add(next)
    order.push(next)
  }
  return Either.right(order)
}
