import * as Either from "effect/Either"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  type AgentIdentity,
  type AgentReference,
  type DependencyGraph,
  dependencyGraph,
  findCycle,
  findMentions,
  mentionedNames,
  resolveAgentReference,
  resolveAgentReferences,
  topologicalOrder,
} from "./AgentReferences.ts"

const agents: ReadonlyArray<AgentIdentity> = [
  { id: "id-total", name: "Total" },
  { id: "id-vat", name: "VAT" },
  { id: "id-party-1", name: "Party" },
  { id: "id-party-2", name: "Party" },
  { id: "id-long", name: "Effective Date" },
]

describe("resolveAgentReference", () => {
  it.each<[string, AgentReference, string]>([
    ["by id", { agent_id: "id-vat" }, "id-vat"],
    ["id wins over a different name", { agent_id: "id-vat", agent_name: "Total" }, "id-vat"],
    ["id wins over an ambiguous name", { agent_id: "id-party-2", agent_name: "Party" }, "id-party-2"],
    ["by exact name", { agent_name: "Total" }, "id-total"],
    ["name with spaces", { agent_name: "Effective Date" }, "id-long"],
    ["unknown id falls back to the name", { agent_id: "id-from-other-project", agent_name: "VAT" }, "id-vat"],
    ["null id, name given", { agent_id: null, agent_name: "VAT" }, "id-vat"],
  ])("%s", (_, reference, id) => {
    expect(resolveAgentReference(reference, agents)).toEqual(Either.right(agents.find((a) => a.id === id)))
  })

  it.each<[string, AgentReference, string, string]>([
    ["unknown id", { agent_id: "nope" }, "UnknownAgentReference", '"nope"'],
    ["unknown name", { agent_name: "Totals" }, "UnknownAgentReference", '"Totals"'],
    ["name is case-sensitive", { agent_name: "total" }, "UnknownAgentReference", '"total"'],
    ["unknown id and name", { agent_id: "x", agent_name: "y" }, "UnknownAgentReference", '"y"'],
    ["empty reference", {}, "UnknownAgentReference", "agent_id or an agent_name"],
    ["empty strings", { agent_id: "", agent_name: "" }, "UnknownAgentReference", "agent_id or an agent_name"],
    ["shared name", { agent_name: "Party" }, "AmbiguousAgentReference", '"Party"'],
    ["unknown id, shared name", { agent_id: "x", agent_name: "Party" }, "AmbiguousAgentReference", '"Party"'],
  ])("%s is refused", (_, reference, tag, mentioned) => {
    const result = resolveAgentReference(reference, agents)
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(result.left._tag).toBe(tag)
      expect(result.left.message).toContain(mentioned)
      expect(result.left.reference).toBe(reference)
    }
  })

  it("lists the candidates of an ambiguous name", () => {
    const result = resolveAgentReference({ agent_name: "Party" }, agents)
    expect(
      Either.isLeft(result) && result.left._tag === "AmbiguousAgentReference" && result.left.candidateIds,
    ).toEqual(["id-party-1", "id-party-2"])
  })

  it("resolves a list, deduplicated, or fails on the first bad reference", () => {
    expect(
      resolveAgentReferences(
        [{ agent_name: "VAT" }, { agent_id: "id-total" }, { agent_id: "id-vat" }],
        agents,
      ),
    ).toEqual(Either.right([agents[1], agents[0]]))
    const failure = resolveAgentReferences(
      [{ agent_name: "VAT" }, { agent_name: "Nope" }, { agent_name: "Party" }],
      agents,
    )
    expect(Either.isLeft(failure) && failure.left._tag).toBe("UnknownAgentReference")
    expect(resolveAgentReferences([], agents)).toEqual(Either.right([]))
  })

  // Names from a tiny alphabet so that shared names are frequent.
  const agentList = fc
    .array(fc.constantFrom("A", "B", "C", "D"), { maxLength: 8 })
    .map((names) => names.map((name, i) => ({ id: `id${i}`, name })))

  it("property: an existing id always resolves to its agent, whatever the name", () => {
    fc.assert(
      fc.property(
        agentList.filter((list) => list.length > 0),
        fc.nat(),
        fc.option(fc.constantFrom("A", "B", "C", "D", "E")),
        (list, n, name) => {
          const target = list[n % list.length]!
          expect(resolveAgentReference({ agent_id: target.id, agent_name: name }, list)).toEqual(
            Either.right(target),
          )
        },
      ),
    )
  })

  it("property: a name resolves iff exactly one agent has it; shared is ambiguous; absent is unknown", () => {
    fc.assert(
      fc.property(
        agentList,
        fc.constantFrom("A", "B", "C", "D", "E"),
        fc.boolean(),
        (list, name, withBadId) => {
          const reference = withBadId ? { agent_id: "missing", agent_name: name } : { agent_name: name }
          const holders = list.filter((agent) => agent.name === name)
          const result = resolveAgentReference(reference, list)
          if (holders.length === 1) expect(result).toEqual(Either.right(holders[0]))
          else {
            expect(Either.isLeft(result)).toBe(true)
            const tag = Either.isLeft(result) ? result.left._tag : undefined
            expect(tag).toBe(holders.length === 0 ? "UnknownAgentReference" : "AmbiguousAgentReference")
          }
        },
      ),
    )
  })
})

describe("mentions in a derived prompt", () => {
  it.each<[string, ReadonlyArray<string>]>([
    ["@Total + @VAT", ["Total", "VAT"]],
    ["@A-@B", ["A", "B"]],
    ["Is @Total, larger than @VAT?", ["Total", "VAT"]],
    ['Compare @"Effective Date" with @[Termination Date].', ["Effective Date", "Termination Date"]],
    ["@[ Padded Name ] and @Total_2024", ["Padded Name", "Total_2024"]],
    ["Sum of @Betrag und @Größe", ["Betrag", "Größe"]],
    ["mail me at someone@example.com about @Total", ["Total"]],
    ["@Total twice: @Total", ["Total"]],
    ['empty @"" and @[] and lone @ sign', []],
    ['unclosed @"Long name and @Next', ["Next"]],
    ["", []],
  ])("%j -> %j", (prompt, names) => {
    expect(mentionedNames(prompt)).toEqual(names)
  })

  it("gives positions that cover the written mention", () => {
    const prompt = 'x @[Long Name] y @"Q" @W.'
    expect(findMentions(prompt).map((m) => prompt.slice(m.start, m.end))).toEqual([
      "@[Long Name]",
      '@"Q"',
      "@W",
    ])
  })

  it("property: every bracketed name written into a prompt is found", () => {
    const name = fc
      .stringMatching(/^[A-Za-z0-9 _.,-]{1,12}$/)
      .filter((s) => s.trim() !== "")
      .map((s) => s.trim())
    fc.assert(
      fc.property(fc.array(name, { maxLength: 5 }), fc.constantFrom(" ", " and ", ", "), (names, glue) => {
        const prompt = names.map((n) => `@[${n}]`).join(glue)
        expect(mentionedNames(prompt)).toEqual([...new Set(names)])
      }),
    )
  })
})

describe("dependency graphs", () => {
  it.each<[string, Record<string, ReadonlyArray<string>>, ReadonlyArray<string> | undefined]>([
    ["empty", {}, undefined],
    ["chain", { c: ["b"], b: ["a"], a: [] }, undefined],
    ["diamond", { d: ["b", "c"], b: ["a"], c: ["a"], a: [] }, undefined],
    ["dependency outside the graph", { b: ["extraction-agent"] }, undefined],
    ["self loop", { a: ["a"] }, ["a", "a"]],
    ["two-cycle", { a: ["b"], b: ["a"] }, ["a", "b", "a"]],
    ["cycle behind a tail", { x: ["a"], a: ["b"], b: ["c"], c: ["a"] }, ["a", "b", "c", "a"]],
  ])("findCycle: %s", (_, graph, cycle) => {
    expect(findCycle(dependencyGraph(graph))).toEqual(cycle)
  })

  it.each<[string, Record<string, ReadonlyArray<string>>, ReadonlyArray<string>]>([
    ["already ordered", { a: [], b: ["a"], c: ["b"] }, ["a", "b", "c"]],
    ["reversed chain", { c: ["b"], b: ["a"], a: [] }, ["a", "b", "c"]],
    ["independent keep insertion order", { z: [], y: [], x: [] }, ["z", "y", "x"]],
    ["diamond", { d: ["b", "c"], c: ["a"], b: ["a"], a: [] }, ["a", "c", "b", "d"]],
    ["outside dependencies ignored", { b: ["e1"], a: ["b", "e2"] }, ["b", "a"]],
    ["earliest ready node first", { b: ["a"], a: [], c: [] }, ["a", "b", "c"]],
  ])("topologicalOrder: %s", (_, graph, order) => {
    expect(topologicalOrder(dependencyGraph(graph))).toEqual(Either.right(order))
  })

  it("topologicalOrder fails with the cycle", () => {
    const result = topologicalOrder(dependencyGraph({ a: ["b"], b: ["a"] }))
    expect(Either.isLeft(result) && result.left.cycle).toEqual(["a", "b", "a"])
    expect(Either.isLeft(result) && result.left.message).toBe("Dependency cycle: a -> b -> a")
  })

  const nodes = ["n0", "n1", "n2", "n3", "n4", "n5", "n6"]
  const randomGraph: fc.Arbitrary<DependencyGraph> = fc
    .array(fc.tuple(fc.nat(6), fc.array(fc.nat(7), { maxLength: 4 })), { maxLength: 7 })
    .map(
      (entries) => new Map(entries.map(([from, to]) => [nodes[from]!, to.map((i) => nodes[i] ?? "outside")])),
    )

  /** Independent oracle: some key reaches itself through one or more edges. */
  const hasCycleByReachability = (graph: DependencyGraph): boolean =>
    [...graph.keys()].some((start) => {
      const seen = new Set<string>()
      const stack = [...(graph.get(start) ?? [])]
      while (stack.length > 0) {
        const node = stack.pop()!
        if (node === start) return true
        if (seen.has(node)) continue
        seen.add(node)
        stack.push(...(graph.get(node) ?? []))
      }
      return false
    })

  it("property: findCycle finds a cycle iff one exists, and it is a real closed path", () => {
    fc.assert(
      fc.property(randomGraph, (graph) => {
        const cycle = findCycle(graph)
        expect(cycle !== undefined).toBe(hasCycleByReachability(graph))
        if (cycle === undefined) return
        expect(cycle.length).toBeGreaterThanOrEqual(2)
        expect(cycle[0]).toBe(cycle[cycle.length - 1])
        expect(new Set(cycle.slice(1)).size).toBe(cycle.length - 1)
        for (let i = 0; i + 1 < cycle.length; i++) {
          expect(graph.get(cycle[i]!) ?? []).toContain(cycle[i + 1])
        }
      }),
      { numRuns: 500 },
    )
  })

  it("property: edges only to earlier nodes never form a cycle", () => {
    const dag = fc
      .array(fc.array(fc.nat(20), { maxLength: 4 }), { maxLength: 10 })
      .map((rows) => new Map(rows.map((deps, i) => [`n${i}`, i === 0 ? [] : deps.map((d) => `n${d % i}`)])))
    fc.assert(fc.property(dag, (graph) => findCycle(graph) === undefined))
  })

  it("property: a topological order holds every key once, each after the keys it depends on", () => {
    fc.assert(
      fc.property(randomGraph, (graph) => {
        const result = topologicalOrder(graph)
        expect(Either.isRight(result)).toBe(!hasCycleByReachability(graph))
        if (Either.isLeft(result)) return
        const order = result.right
        expect([...order].sort()).toEqual([...graph.keys()].sort())
        const position = new Map(order.map((node, i) => [node, i]))
        for (const [node, dependencies] of graph) {
          for (const dependency of dependencies) {
            if (graph.has(dependency)) expect(position.get(dependency)!).toBeLessThan(position.get(node)!)
          }
        }
      }),
      { numRuns: 500 },
    )
  })
})
