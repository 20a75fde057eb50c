import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { DocumentStatus } from "./Enums.ts"
import {
  byDocument,
  dimensionsKey,
  type ExtractionRecord,
  extractionTaskKey,
  type LaunchDecision,
  type Plan,
  type ProjectSnapshot,
  planLaunch,
  type ResolutionRecord,
  type SnapshotAgent,
  type SnapshotDimension,
  type SnapshotDocument,
} from "./LaunchPlanner.ts"

// ---------------------------------------------------------------------------------------------------------
// Builders

const doc = (
  id: string,
  status: DocumentStatus = "Processed",
  version = 1,
  parseInFlight = false,
): SnapshotDocument => ({
  id,
  name: `${id}.pdf`,
  status,
  version,
  parseInFlight,
})

const extraction = (id: string, overrides: Partial<SnapshotAgent> = {}): SnapshotAgent => ({
  id,
  name: id.toUpperCase(),
  type: "extraction",
  configVersion: 1,
  isDraft: false,
  dimensions: [],
  references: [],
  ...overrides,
})

const derived = (id: string, references: ReadonlyArray<string>, overrides: Partial<SnapshotAgent> = {}) =>
  extraction(id, { type: "derived", references, ...overrides })

const extracted = (agent: SnapshotAgent, document: SnapshotDocument): ExtractionRecord => ({
  agentId: agent.id,
  agentConfigVersion: agent.configVersion,
  documentId: document.id,
  documentVersion: document.version,
  dimensionsKey: dimensionsKey(agent.dimensions),
})

const resolved = (agent: SnapshotAgent, complete = true): ResolutionRecord => ({
  agentId: agent.id,
  agentConfigVersion: agent.configVersion,
  complete,
})

const snapshot = (parts: Partial<ProjectSnapshot>): ProjectSnapshot => ({
  documents: [],
  agents: [],
  extractions: [],
  resolutions: [],
  run: { running: false, queued: false },
  ...parts,
})

/** Everything extracted and resolved for the given documents and agents. */
const settled = (documents: ReadonlyArray<SnapshotDocument>, agents: ReadonlyArray<SnapshotAgent>) => ({
  extractions: agents
    .filter((agent) => agent.type === "extraction")
    .flatMap((agent) => documents.map((document) => extracted(agent, document))),
  resolutions: agents.map((agent) => resolved(agent)),
})

const expectPlan = (decision: LaunchDecision): Plan => {
  expect(decision._tag).toBe("Plan")
  if (decision._tag !== "Plan") throw new Error(`expected a plan, got ${decision._tag}`)
  return decision
}

const pairs = (plan: Plan) =>
  plan.extract.map((pair) => `${pair.agentId}/${pair.documentId}@${pair.documentVersion}`)

// ---------------------------------------------------------------------------------------------------------
// Scenarios

describe("planLaunch scenarios", () => {
  const d1 = doc("d1")
  const d2 = doc("d2")
  const a = extraction("a")
  const b = extraction("b")

  it("fresh project: parse pending documents, extract every pair, resolve every agent", () => {
    const plan = expectPlan(
      planLaunch(snapshot({ documents: [doc("d1", "Pending"), doc("d2", "Pending")], agents: [a, b] })),
    )
    expect(plan.parse).toEqual(["d1", "d2"])
    expect(pairs(plan)).toEqual(["a/d1@1", "a/d2@1", "b/d1@1", "b/d2@1"])
    expect(plan.resolve).toEqual(["a", "b"])
    expect(plan.derive).toEqual([])
    expect(plan.upToDate).toEqual([])
    expect(plan.nothingToDo).toBe(false)
  })

  it("relaunch with nothing changed: empty plan", () => {
    const plan = expectPlan(
      planLaunch(snapshot({ documents: [d1, d2], agents: [a, b], ...settled([d1, d2], [a, b]) })),
    )
    expect(plan).toMatchObject({ parse: [], extract: [], resolve: [], derive: [], upToDate: ["a", "b"] })
    expect(plan.nothingToDo).toBe(true)
  })

  it("empty project: nothing to do", () => {
    expect(expectPlan(planLaunch(snapshot({}))).nothingToDo).toBe(true)
  })

  it("a changed agent (new config version) re-extracts all documents; untouched agents are skipped", () => {
    const changed = { ...a, configVersion: 2 }
    const plan = expectPlan(
      planLaunch(snapshot({ documents: [d1, d2], agents: [changed, b], ...settled([d1, d2], [a, b]) })),
    )
    expect(pairs(plan)).toEqual(["a/d1@1", "a/d2@1"])
    expect(plan.extract.every((pair) => pair.agentConfigVersion === 2)).toBe(true)
    expect(plan.resolve).toEqual(["a"])
    expect(plan.upToDate).toEqual(["b"])
  })

  it("a new document is parsed and extracted for every agent; its dependants re-derive", () => {
    const c = derived("c", ["a"])
    const d3 = doc("d3", "Pending")
    const plan = expectPlan(
      planLaunch(snapshot({ documents: [d1, d2, d3], agents: [a, b, c], ...settled([d1, d2], [a, b, c]) })),
    )
    expect(plan.parse).toEqual(["d3"])
    expect(pairs(plan)).toEqual(["a/d3@1", "b/d3@1"])
    expect(plan.resolve).toEqual(["a", "b"])
    expect(plan.derive).toEqual(["c"])
  })

  it("a replaced document (version + 1) is re-parsed and re-extracted", () => {
    const replaced = doc("d2", "Pending", 2)
    const plan = expectPlan(
      planLaunch(snapshot({ documents: [d1, replaced], agents: [a], ...settled([d1, d2], [a]) })),
    )
    expect(plan.parse).toEqual(["d2"])
    expect(pairs(plan)).toEqual(["a/d2@2"])
    expect(plan.extract[0] && extractionTaskKey(plan.extract[0])).toBe("extract:d2:2")
  })

  it("groups the pairs by document version: one extraction task per document for all its agents", () => {
    const d3 = doc("d3", "Processed")
    const plan = expectPlan(planLaunch(snapshot({ documents: [d1, d2, d3], agents: [a, b] })))
    const work = byDocument(plan.extract)
    expect(work.map((w) => `${w.documentId}@${w.documentVersion}`)).toEqual(["d1@1", "d2@1", "d3@1"])
    for (const w of work) expect(w.agents.map((x) => x.agentId).sort()).toEqual(["a", "b"])
    expect(work.reduce((n, w) => n + w.agents.length, 0)).toBe(plan.extract.length)
  })

  it("complete extractions but incomplete resolution: resolve only", () => {
    const plan = expectPlan(
      planLaunch(
        snapshot({
          documents: [d1],
          agents: [a],
          extractions: [extracted(a, d1)],
          resolutions: [resolved(a, false)],
        }),
      ),
    )
    expect(plan).toMatchObject({ parse: [], extract: [], resolve: ["a"], derive: [], nothingToDo: false })
  })

  it("a resolution of an older config version does not count", () => {
    const changed = { ...a, configVersion: 3 }
    const plan = expectPlan(
      planLaunch(snapshot({ documents: [], agents: [changed], resolutions: [resolved(a)] })),
    )
    expect(plan.resolve).toEqual(["a"])
  })

  it("any failed document rejects the launch, naming the failed files", () => {
    const decision = planLaunch(
      snapshot({
        documents: [d1, doc("bad", "Failed"), doc("worse", "Failed")],
        agents: [a],
        run: { running: true, queued: true },
      }),
    )
    expect(decision._tag).toBe("Rejected")
    if (decision._tag !== "Rejected") return
    expect(decision.failedDocuments).toEqual([
      { id: "bad", name: "bad.pdf" },
      { id: "worse", name: "worse.pdf" },
    ])
    expect(decision.message).toContain('"bad.pdf"')
    expect(decision.message).toContain('"worse.pdf"')
  })

  it.each([
    [false, false],
    [true, true],
  ])("a launch during a running run queues behind it (queued run exists: %s)", (queued, alreadyQueued) => {
    const decision = planLaunch(
      snapshot({ documents: [doc("d1", "Pending")], agents: [a], run: { running: true, queued } }),
    )
    expect(decision).toMatchObject({ _tag: "QueuedBehindRun", alreadyQueued })
  })

  it("parsing in flight: the launch waits for it", () => {
    const decision = planLaunch(
      snapshot({
        documents: [d1, doc("d2", "Pending", 1, true), doc("d3", "Pending")],
        agents: [a],
        run: { running: false, queued: true },
      }),
    )
    expect(decision).toMatchObject({
      _tag: "WaitingForParsing",
      parsingDocumentIds: ["d2"],
      alreadyQueued: true,
    })
  })

  it("draft agents are never planned, and dependants ignore them", () => {
    const draft = derived("draft", ["a"], { isDraft: true })
    const reader = derived("reader", ["draft"])
    const plan = expectPlan(
      planLaunch(snapshot({ documents: [d1], agents: [a, draft, reader], ...settled([d1], [a, reader]) })),
    )
    expect(plan.drafts).toEqual(["draft"])
    expect(plan.nothingToDo).toBe(true)
    expect(plan.upToDate).toEqual(["a", "reader"])
  })

  it("derived agents run in dependency order, whatever the snapshot order", () => {
    const top = derived("top", ["mid", "b"])
    const mid = derived("mid", ["a"])
    const changed = { ...a, configVersion: 2 }
    const plan = expectPlan(
      planLaunch(
        snapshot({ documents: [d1], agents: [top, b, mid, changed], ...settled([d1], [a, b, top, mid]) }),
      ),
    )
    expect(plan.resolve).toEqual(["a"])
    expect(plan.derive).toEqual(["mid", "top"])
    expect(plan.upToDate).toEqual(["b"])
  })

  it("only the unresolved derived agent and what reads it are derived", () => {
    const x = derived("x", ["a"])
    const y = derived("y", ["x"])
    const z = derived("z", ["a"])
    const base = settled([d1], [a, y, z])
    const plan = expectPlan(planLaunch(snapshot({ documents: [d1], agents: [a, z, y, x], ...base })))
    expect(plan).toMatchObject({ resolve: [], derive: ["x", "y"], upToDate: ["a", "z"] })
  })

  it.each<[string, ReadonlyArray<SnapshotDimension>, ReadonlyArray<SnapshotDimension>, boolean]>([
    [
      "a static value added",
      [{ dimensionId: "region", areValuesDynamic: false, values: ["EU"] }],
      [{ dimensionId: "region", areValuesDynamic: false, values: ["EU", "US"] }],
      true,
    ],
    ["a dimension attached", [], [{ dimensionId: "region", areValuesDynamic: true, values: [] }], true],
    [
      "static values reordered",
      [{ dimensionId: "region", areValuesDynamic: false, values: ["EU", "US"] }],
      [{ dimensionId: "region", areValuesDynamic: false, values: ["US", "EU"] }],
      false,
    ],
    [
      "dimensions reordered",
      [
        { dimensionId: "x", areValuesDynamic: true, values: [] },
        { dimensionId: "y", areValuesDynamic: true, values: [] },
      ],
      [
        { dimensionId: "y", areValuesDynamic: true, values: [] },
        { dimensionId: "x", areValuesDynamic: true, values: [] },
      ],
      false,
    ],
    [
      "discovered values of a dynamic dimension changed",
      [{ dimensionId: "region", areValuesDynamic: true, values: ["EU"] }],
      [{ dimensionId: "region", areValuesDynamic: true, values: ["EU", "US"] }],
      false,
    ],
    [
      "a document added to the Document dimension",
      [{ dimensionId: "doc", areValuesDynamic: false, source: "DOCUMENT", values: ["d1.pdf"] }],
      [{ dimensionId: "doc", areValuesDynamic: false, source: "DOCUMENT", values: ["d1.pdf", "d2.pdf"] }],
      false,
    ],
  ])("dimensions: %s -> re-extract %s", (_, before, after, reextract) => {
    const old = extraction("a", { dimensions: before })
    const now = extraction("a", { dimensions: after })
    const plan = expectPlan(planLaunch(snapshot({ documents: [d1], agents: [now], ...settled([d1], [old]) })))
    expect(pairs(plan)).toEqual(reextract ? ["a/d1@1"] : [])
  })

  it("a cycle between derived agents is reported, not planned", () => {
    const decision = planLaunch(snapshot({ agents: [a, derived("p", ["q", "a"]), derived("q", ["p"])] }))
    expect(decision).toMatchObject({ _tag: "CyclicReferences", cycle: ["p", "q", "p"] })
  })
})

// ---------------------------------------------------------------------------------------------------------
// Properties

const statusArb = fc.constantFrom<DocumentStatus>("Pending", "Processed", "Processed", "Processed", "Failed")

const documentsArb = fc
  .array(fc.record({ status: statusArb, version: fc.integer({ min: 1, max: 3 }), inFlight: fc.boolean() }), {
    maxLength: 5,
  })
  .map((rows) =>
    rows.map((row, i) => doc(`d${i}`, row.status, row.version, row.status === "Pending" && row.inFlight)),
  )

const dimensionPool: ReadonlyArray<ReadonlyArray<SnapshotDimension>> = [
  [],
  [{ dimensionId: "region", areValuesDynamic: false, values: ["EU", "US"] }],
  [{ dimensionId: "region", areValuesDynamic: false, values: ["EU"] }],
  [{ dimensionId: "year", areValuesDynamic: true, values: [] }],
]

const agentSeedArb = fc.record({
  derived: fc.boolean(),
  isDraft: fc.boolean(),
  configVersion: fc.integer({ min: 1, max: 3 }),
  dimensions: fc.nat(dimensionPool.length - 1),
  references: fc.array(fc.nat(), { maxLength: 3 }),
})

/** Derived agents reference only earlier agents, so the graph is acyclic. */
const agentsArb = fc.array(agentSeedArb, { maxLength: 6 }).map((seeds) =>
  seeds.map(
    (seed, i): SnapshotAgent => ({
      id: `a${i}`,
      name: `Agent ${i}`,
      type: seed.derived ? "derived" : "extraction",
      configVersion: seed.configVersion,
      isDraft: seed.derived && seed.isDraft,
      dimensions: dimensionPool[seed.dimensions]!,
      references: seed.derived && i > 0 ? [...new Set(seed.references.map((r) => `a${r % i}`))] : [],
    }),
  ),
)

/** For each agent/document pair: nothing, a current record, or a record stale in one way. */
const extractionFor = (
  choice: number,
  agent: SnapshotAgent,
  document: SnapshotDocument,
): ExtractionRecord[] => {
  const current = extracted(agent, document)
  switch (choice % 5) {
    case 0:
      return []
    case 1:
      return [current]
    case 2:
      return [{ ...current, agentConfigVersion: agent.configVersion - 1 }]
    case 3:
      return [{ ...current, documentVersion: document.version + 1 }]
    default:
      return [{ ...current, dimensionsKey: "[]" }]
  }
}

const resolutionFor = (choice: number, agent: SnapshotAgent): ResolutionRecord[] => {
  switch (choice % 4) {
    case 0:
      return []
    case 1:
      return [resolved(agent, true)]
    case 2:
      return [resolved(agent, false)]
    default:
      return [{ ...resolved(agent, true), agentConfigVersion: agent.configVersion + 1 }]
  }
}

const snapshotArb: fc.Arbitrary<ProjectSnapshot> = fc
  .record({
    documents: documentsArb,
    agents: agentsArb,
    extractionChoices: fc.array(fc.nat(), { minLength: 30, maxLength: 30 }),
    resolutionChoices: fc.array(fc.nat(), { minLength: 6, maxLength: 6 }),
    run: fc.record({ running: fc.boolean(), queued: fc.boolean() }),
  })
  .map(({ documents, agents, extractionChoices, resolutionChoices, run }) => ({
    documents,
    agents,
    extractions: agents.flatMap((agent, i) =>
      documents.flatMap((document, j) => extractionFor(extractionChoices[i * 5 + j] ?? 0, agent, document)),
    ),
    resolutions: agents.flatMap((agent, i) => resolutionFor(resolutionChoices[i] ?? 0, agent)),
    run,
  }))

/** Snapshots that lead to a plan: no failed document, no running run, no parse in flight. */
const plannableArb = snapshotArb.map(
  (s): ProjectSnapshot => ({
    ...s,
    documents: s.documents.map((d) => ({
      ...d,
      status: d.status === "Failed" ? "Processed" : d.status,
      parseInFlight: false,
    })),
    run: { running: false, queued: s.run.queued },
  }),
)

/** The state after the plan's work succeeded: parsed documents, new extractions, complete resolutions. */
const applyPlan = (s: ProjectSnapshot, plan: Plan): ProjectSnapshot => {
  const parsed = new Set(plan.parse)
  const byId = new Map(s.agents.map((agent) => [agent.id, agent]))
  return {
    ...s,
    documents: s.documents.map((d) => (parsed.has(d.id) ? { ...d, status: "Processed" } : d)),
    extractions: [...s.extractions, ...plan.extract],
    resolutions: [
      ...s.resolutions,
      ...[...plan.resolve, ...plan.derive].map((id) => resolved(byId.get(id)!, true)),
    ],
    run: { running: false, queued: false },
  }
}

const plannedAgentIds = (plan: Plan) =>
  new Set([...plan.extract.map((pair) => pair.agentId), ...plan.resolve, ...plan.derive])

describe("planLaunch properties", () => {
  it("a snapshot with any Failed document is always Rejected, listing exactly those documents", () => {
    fc.assert(
      fc.property(snapshotArb, (s) => {
        const failed = s.documents.filter((d) => d.status === "Failed")
        const decision = planLaunch(s)
        expect(decision._tag === "Rejected").toBe(failed.length > 0)
        if (decision._tag === "Rejected")
          expect(decision.failedDocuments.map((d) => d.id)).toEqual(failed.map((d) => d.id))
      }),
    )
  })

  it("without failed documents: a running run queues, parsing in flight waits, otherwise a plan", () => {
    fc.assert(
      fc.property(snapshotArb, (s) => {
        const decision = planLaunch(s)
        if (s.documents.some((d) => d.status === "Failed")) return
        if (s.run.running)
          expect(decision).toMatchObject({ _tag: "QueuedBehindRun", alreadyQueued: s.run.queued })
        else if (s.documents.some((d) => d.parseInFlight)) expect(decision._tag).toBe("WaitingForParsing")
        else expect(decision._tag).toBe("Plan")
      }),
    )
  })

  it("parse list is exactly the Pending documents; extraction pairs never name a Failed document", () => {
    fc.assert(
      fc.property(plannableArb, (s) => {
        const plan = expectPlan(planLaunch(s))
        const status = new Map(s.documents.map((d) => [d.id, d.status]))
        expect(plan.parse).toEqual(s.documents.filter((d) => d.status === "Pending").map((d) => d.id))
        for (const pair of plan.extract) {
          expect(status.get(pair.documentId)).not.toBe("Failed")
          expect(status.get(pair.documentId)).toBeDefined()
        }
      }),
    )
  })

  it("no work is planned for a draft agent, and extraction pairs are for extraction agents only", () => {
    fc.assert(
      fc.property(plannableArb, (s) => {
        const plan = expectPlan(planLaunch(s))
        const drafts = new Set(s.agents.filter((a) => a.isDraft).map((a) => a.id))
        const extractionAgents = new Set(s.agents.filter((a) => a.type === "extraction").map((a) => a.id))
        for (const id of plannedAgentIds(plan)) expect(drafts.has(id)).toBe(false)
        for (const pair of plan.extract) expect(extractionAgents.has(pair.agentId)).toBe(true)
        expect(plan.drafts).toEqual([...drafts])
      }),
    )
  })

  it("every agent is planned, up to date or a draft, exactly once", () => {
    fc.assert(
      fc.property(plannableArb, (s) => {
        const plan = expectPlan(planLaunch(s))
        const planned = [...plannedAgentIds(plan)]
        expect([...planned, ...plan.upToDate, ...plan.drafts].sort()).toEqual(
          s.agents.map((a) => a.id).sort(),
        )
        expect(plan.nothingToDo).toBe(planned.length === 0 && plan.parse.length === 0)
      }),
    )
  })

  it("every pair of a non-draft extraction agent and a non-failed document is planned or already extracted", () => {
    fc.assert(
      fc.property(plannableArb, (s) => {
        const plan = expectPlan(planLaunch(s))
        const have = new Set([...s.extractions, ...plan.extract].map((r) => JSON.stringify(r)))
        for (const agent of s.agents.filter((a) => a.type === "extraction" && !a.isDraft)) {
          for (const document of s.documents)
            expect(have.has(JSON.stringify(extracted(agent, document)))).toBe(true)
        }
        // and an agent with new extractions is always re-resolved
        for (const pair of plan.extract) expect(plan.resolve).toContain(pair.agentId)
      }),
    )
  })

  it("derive order respects dependencies, and changes propagate to dependants", () => {
    fc.assert(
      fc.property(plannableArb, (s) => {
        const plan = expectPlan(planLaunch(s))
        const position = new Map(plan.derive.map((id, i) => [id, i]))
        const refreshed = new Set([...plan.resolve, ...plan.derive])
        for (const agent of s.agents.filter((a) => a.type === "derived" && !a.isDraft)) {
          for (const reference of agent.references) {
            if (position.has(agent.id) && position.has(reference)) {
              expect(position.get(reference)!).toBeLessThan(position.get(agent.id)!)
            }
            if (refreshed.has(reference)) expect(position.has(agent.id)).toBe(true)
          }
        }
      }),
    )
  })

  it("after the plan's work is applied, planning again yields nothing to do", () => {
    fc.assert(
      fc.property(plannableArb, (s) => {
        const after = applyPlan(s, expectPlan(planLaunch(s)))
        const again = expectPlan(planLaunch(after))
        expect(again.nothingToDo).toBe(true)
        expect(again.upToDate).toEqual(s.agents.filter((a) => !a.isDraft).map((a) => a.id))
      }),
    )
  })

  it("the plan does not depend on the order of the existing records", () => {
    fc.assert(
      fc.property(plannableArb, fc.boolean(), (s, reverseExtractions) => {
        const shuffled = {
          ...s,
          extractions: reverseExtractions ? [...s.extractions].reverse() : s.extractions,
          resolutions: [...s.resolutions].reverse(),
        }
        expect(planLaunch(shuffled)).toEqual(planLaunch(s))
      }),
    )
  })
})
