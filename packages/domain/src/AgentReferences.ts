/**
 * References between agents:
 * - resolving a derived agent's `derived_agent_references` against the project's agents,
 * - finding `@Name` mentions in a `derived_prompt`,
 * - cycle detection and dependency order over an agent dependency graph.
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import { collapseWhitespace } from "./Values.ts"

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

export interface PromptReference {
  /** The matched input agent name as given in the inputs, or null when no input has that name. */
  readonly agentName: string | null
  /** The name as written. */
  readonly written: string
  /** Offset of the `@`. */
  readonly start: number
  /** Offset just after the reference. */
  readonly end: number
}

const WORD_CHAR = /[\p{L}\p{N}_]/u

/**
 * The `@` references of a prompt against the known agent names. `@"Long Name"` and `@[Long Name]` name an
 * agent exactly (ignoring case); after a bare `@` the longest known name that follows (ignoring case, and
 * not running on into a word) is taken, so names may contain spaces; otherwise the word after `@` is an
 * unknown reference. An `@` right after a letter or digit (an e-mail address) is not a reference.
 */
export const findReferences = (
  prompt: string,
  agentNames: ReadonlyArray<string>,
): ReadonlyArray<PromptReference> => {
  const names = [...new Set(agentNames)].sort((a, b) => b.length - a.length)
  const byLowerName = new Map<string, string>()
  for (const name of names) {
    const key = collapseWhitespace(name).toLowerCase()
    if (!byLowerName.has(key)) byLowerName.set(key, name)
  }
  const quoted = new Map(findMentions(prompt).map((mention) => [mention.start, mention]))
  const references: Array<PromptReference> = []
  let i = 0
  while (i < prompt.length) {
    if (prompt[i] !== "@" || (i > 0 && WORD_CHAR.test(prompt[i - 1]!))) {
      i += 1
      continue
    }
    const next = prompt[i + 1]
    const mention = quoted.get(i)
    if (mention !== undefined && (next === '"' || next === "[")) {
      const agentName = byLowerName.get(collapseWhitespace(mention.name).toLowerCase()) ?? null
      references.push({ agentName, written: mention.name, start: i, end: mention.end })
      i = mention.end
      continue
    }
    const rest = prompt.slice(i + 1)
    const lowerRest = rest.toLowerCase()
    const known = names.find((name) => {
      if (name === "" || !lowerRest.startsWith(name.toLowerCase())) return false
      const after = rest[name.length]
      return !(WORD_CHAR.test(name[name.length - 1]!) && after !== undefined && WORD_CHAR.test(after))
    })
    if (known !== undefined) {
      references.push({
        agentName: known,
        written: rest.slice(0, known.length),
        start: i,
        end: i + 1 + known.length,
      })
      i += 1 + known.length
      continue
    }
    const word = /^[\p{L}\p{N}_]+/u.exec(rest)
    if (word) {
      references.push({ agentName: null, written: word[0], start: i, end: i + 1 + word[0].length })
      i += 1 + word[0].length
      continue
    }
    i += 1
  }
  return references
}

const PLAIN_NAME = /^[\p{L}\p{N}_]+$/u

/**
 * How a name is best written in a prompt: `@Name` for a plain word, else `@"Long Name"` (or `@[Name with
 * "quotes"]`), which never depends on which other names exist.
 */
export const mentionToken = (name: string): string =>
  PLAIN_NAME.test(name) ? `@${name}` : name.includes('"') ? `@[${name}]` : `@"${name}"`

/** A mention being typed, ending at the caret: where its `@` is and what follows it so far. */
export interface PartialMention {
  readonly start: number
  readonly end: number
  readonly query: string
}

const MENTION_BEFORE_CARET = /(?<![\p{L}\p{N}_])@(?:"([^"\n]*)|\[([^\]\n]*)|([\p{L}\p{N}_]*))$/u

/** The mention being typed just before the caret, if any (for completion). */
export const mentionBeforeCaret = (text: string, caret: number): PartialMention | null => {
  const m = MENTION_BEFORE_CARET.exec(text.slice(0, caret))
  if (!m) return null
  return { start: m.index, end: caret, query: m[1] ?? m[2] ?? m[3] ?? "" }
}

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
