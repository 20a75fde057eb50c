/**
 * The `extract` stage: one document version and every agent with an outstanding pair on it. The document
 * goes to the model once per group of agents (`LLM_MAX_AGENTS_PER_REQUEST`) and window of pages (a document
 * larger than `LLM_CONTEXT_TOKENS` allows goes as the pages retrieval chooses for the agents, in windows);
 * dynamic dimension values are discovered first. Every answer's citation is checked against its page, from
 * any provider; an ungrounded answer is kept as such, never cited as if it were grounded. Answers from
 * several windows are merged per agent and combination of dimension values: the best-supported first, each
 * window's passage its own extraction. An agent or document that changed since the task was planned
 * commits nothing (the other agents of the task still do).
 */
import type { TaskRow } from "@dxs/db"
import { extractionInputs } from "@dxs/db/repositories/ProjectReads"
import {
  type DocumentExtraction,
  documentExtractionsOnCompletion,
  ensureAtomicValues,
  type InstanceInput,
} from "@dxs/db/repositories/Results"
import type { CompletionWrites } from "@dxs/db/TaskQueue"
import { extractionConfidence } from "@dxs/domain/Confidence"
import type { DocumentExtraction as DocumentWork } from "@dxs/domain/LaunchPlanner"
import { agentGroups, charsWithin, pageTokenBudget } from "@dxs/domain/ModelRequests"
import { Effect } from "effect"
import { type Citation, groundCitation } from "../../llm/Citations.ts"
import {
  type AgentSpec,
  addUsage,
  type DimensionQuery,
  type ExtractedValue,
  LanguageModel,
  type LanguageModelShape,
  type ModelError,
  noUsage,
  type PageText,
  type Usage,
} from "../../llm/LanguageModel.ts"
import { RequestBudget } from "../../llm/RequestBudget.ts"
import { documentWindows } from "../../retrieval/DocumentWindows.ts"
import {
  agentDimensionsKey,
  agentSpec,
  dimensionQuery,
  type ProjectAgent,
  type ProjectDocument,
  projectAgentOf,
  projectDocumentOf,
} from "../ProjectState.ts"
import {
  commitTask,
  type InstanceRef,
  instanceFor,
  instanceInputs,
  type StageRun,
  type StageShape,
} from "./Stage.ts"

type ExtractPayload = DocumentWork & { readonly runId: string }

/** Tasks enqueued before extraction went per document held one pair each. */
interface PairPayload {
  readonly runId: string
  readonly agentId: string
  readonly agentConfigVersion: number
  readonly documentId: string
  readonly documentVersion: number
  readonly dimensionsKey: string
}

const payloadOf = (task: TaskRow): ExtractPayload => {
  const p = task.payload as unknown as ExtractPayload | PairPayload
  return "agents" in p
    ? p
    : {
        runId: p.runId,
        documentId: p.documentId,
        documentVersion: p.documentVersion,
        agents: [{ agentId: p.agentId, agentConfigVersion: p.agentConfigVersion }],
      }
}

/** One answer with its checked citation and the window it came from. */
interface Answer {
  readonly value: ExtractedValue
  readonly citation: Citation
  readonly window: number
}

const combinationOf = (agent: ProjectAgent, value: ExtractedValue) =>
  JSON.stringify(agent.dimensions.map((d) => value.dimensionValues[d.dimensionId] ?? null))

/**
 * Per combination of dimension values, its answers best-supported first: grounded before ungrounded, then
 * by the model's confidence, then by window. An ungrounded answer is kept only when nothing grounded was
 * found for the combination.
 */
const mergeAnswers = (agent: ProjectAgent, answers: ReadonlyArray<Answer>): Array<Answer> => {
  const byCombination = new Map<string, Array<Answer>>()
  for (const a of answers) {
    const key = combinationOf(agent, a.value)
    const list = byCombination.get(key) ?? []
    list.push(a)
    byCombination.set(key, list)
  }
  const rank = (a: Answer) => (a.citation.grounded ? 2 : 0) + (a.value.modelConfidence ?? 0.5)
  return [...byCombination.values()].flatMap((list) => {
    const sorted = [...list].sort((x, y) => rank(y) - rank(x) || x.window - y.window)
    const grounded = sorted.filter((a) => a.citation.grounded)
    return grounded.length > 0 ? grounded : sorted.slice(0, 1)
  })
}

/** An agent of the task, at the config version the task was planned for. */
interface TaskAgent {
  readonly agent: ProjectAgent
  readonly configVersion: number
  readonly spec: AgentSpec
}

/**
 * The task's agents still at the version it was planned for (drafts left out), when the document is still
 * processed at its planned version; none otherwise.
 */
const currentAgents = (
  p: ExtractPayload,
  loaded: ReadonlyMap<string, ProjectAgent>,
  document: ProjectDocument | undefined,
): Array<TaskAgent> => {
  const documentCurrent =
    document !== undefined && document.status === "Processed" && document.version === p.documentVersion
  return documentCurrent
    ? p.agents.flatMap((ref) => {
        const agent = loaded.get(ref.agentId)
        return agent !== undefined &&
          !agent.row.is_draft &&
          agent.row.config_version === ref.agentConfigVersion
          ? [{ agent, configVersion: ref.agentConfigVersion, spec: agentSpec(agent.row) }]
          : []
      })
    : []
}

/** Dynamic dimension values, discovered from every window; per agent, the dimensions its requests ask. */
const discoverDimensions = (
  model: LanguageModelShape,
  document: ProjectDocument,
  agents: ReadonlyArray<TaskAgent>,
  windows: ReadonlyArray<ReadonlyArray<PageText>>,
): Effect.Effect<
  { readonly usage: Usage; readonly dimensionsOf: ReadonlyMap<string, ReadonlyArray<DimensionQuery>> },
  ModelError
> =>
  Effect.gen(function* () {
    let usage: Usage = noUsage
    const dimensionsOf = new Map<string, ReadonlyArray<DimensionQuery>>()
    for (const { agent, spec } of agents) {
      const discovered = new Map<string, ReadonlyArray<string>>()
      for (const dimension of agent.dimensions) {
        if (dimension.source !== "CUSTOM" || !dimension.areValuesDynamic) continue
        const found: Array<string> = []
        for (const pages of windows) {
          const r = yield* model.discoverDimensionValues({
            agent: spec,
            dimension: dimensionQuery(dimension, document, found),
            document: { id: document.id, name: document.name },
            pages,
          })
          usage = addUsage(usage, r.usage)
          for (const v of r.values) if (!found.includes(v)) found.push(v)
        }
        discovered.set(dimension.dimensionId, found)
      }
      dimensionsOf.set(
        agent.row.id,
        agent.dimensions.map((d) => dimensionQuery(d, document, discovered.get(d.dimensionId))),
      )
    }
    return { usage, dimensionsOf }
  })

/** The document's answers per agent, each with its citation checked against the pages it was asked on. */
const extractAnswers = (
  model: LanguageModelShape,
  maxAgentsPerRequest: number,
  input: {
    readonly document: ProjectDocument
    readonly agents: ReadonlyArray<TaskAgent>
    readonly windows: ReadonlyArray<ReadonlyArray<PageText>>
    readonly dimensionsOf: ReadonlyMap<string, ReadonlyArray<DimensionQuery>>
    readonly referenceDate: string
  },
): Effect.Effect<
  { readonly usage: Usage; readonly answers: ReadonlyMap<string, Array<Answer>> },
  ModelError
> =>
  Effect.gen(function* () {
    const { document, agents, windows, dimensionsOf } = input
    // One request per group of agents and window; a dimension with no value for this document (a tag
    // it lacks, nothing discovered) leaves its agent out: there is nothing to ask.
    const askable = agents.filter(({ agent }) =>
      (dimensionsOf.get(agent.row.id) ?? []).every((d) => d.values.length > 0),
    )
    const requests = agentGroups(askable, maxAgentsPerRequest).flatMap((group) =>
      windows.map((pages, window) => ({ group, pages, window })),
    )
    const responses = yield* Effect.forEach(
      requests,
      ({ group, pages, window }) =>
        Effect.map(
          model.extractDocument({
            document: { id: document.id, name: document.name },
            pages,
            agents: group.map(({ agent, spec }) => ({
              agent: spec,
              dimensions: dimensionsOf.get(agent.row.id) ?? [],
            })),
            referenceDate: input.referenceDate,
          }),
          (response) => ({ response, pages, window }),
        ),
      { concurrency: "unbounded" },
    )
    let usage: Usage = noUsage
    const answers = new Map<string, Array<Answer>>()
    for (const { response, pages, window } of responses) {
      usage = addUsage(usage, response.usage)
      for (const { agentId, values } of response.agents) {
        const spec = agents.find((a) => a.spec.id === agentId)?.spec
        if (spec === undefined) continue
        const list = answers.get(agentId) ?? []
        for (const value of values) list.push({ value, citation: checkCitation(pages, value, spec), window })
        answers.set(agentId, list)
      }
    }
    return { usage, answers }
  })

/** A merged answer to store, with the dimension instances of its atomic value. */
interface Kept {
  readonly agent: ProjectAgent
  readonly value: ExtractedValue
  readonly citation: Citation
  readonly instances: ReadonlyArray<InstanceInput>
}

/**
 * Per agent, its merged answers with their dimension instances; a value missing one of the agent's dimensions
 * has no atomic value and is not kept.
 */
const keptAnswers = (
  agents: ReadonlyArray<TaskAgent>,
  answers: ReadonlyMap<string, ReadonlyArray<Answer>>,
  document: ProjectDocument,
): Array<Kept> =>
  agents.flatMap(({ agent }) =>
    mergeAnswers(agent, answers.get(agent.row.id) ?? []).flatMap(({ value, citation }) => {
      const instances = agent.dimensions.map((d) => {
        const v = value.dimensionValues[d.dimensionId]
        return v === undefined ? undefined : instanceFor(d, v, document)
      })
      return instances.some((i) => i === undefined)
        ? []
        : [{ agent, value, citation, instances: instanceInputs(instances as Array<InstanceRef>) }]
    }),
  )

/** Per agent, the extractions to store: each kept answer on its atomic value (`atomics` in `kept` order). */
const documentExtractions = (
  kept: ReadonlyArray<Kept>,
  atomics: ReadonlyArray<{ readonly id: string }>,
): Map<string, Array<DocumentExtraction>> => {
  const extractions = new Map<string, Array<DocumentExtraction>>()
  kept.forEach(({ agent, value, citation }, i) => {
    const list = extractions.get(agent.row.id) ?? []
    list.push({
      atomicValueId: atomics[i]!.id,
      value: value.value,
      relevantPassage: citation.passage,
      reasoning: value.reasoning,
      pageNumber: citation.pageNumber,
      grounded: citation.grounded,
      confidence: extractionConfidence({
        modelConfidence: value.modelConfidence,
        grounded: citation.grounded,
      }),
    })
    extractions.set(agent.row.id, list)
  })
  return extractions
}

/**
 * The task's writes: the document's extractions of each agent still at the version the task was planned
 * for (checked, and the agents' rows locked for share, by the write itself), made in the statement that
 * completes the task.
 */
const extractionWrites = (input: {
  readonly projectId: string
  readonly documentId: string
  readonly documentVersion: number
  readonly agents: ReadonlyArray<TaskAgent>
  readonly extractions: ReadonlyMap<string, ReadonlyArray<DocumentExtraction>>
}): CompletionWrites =>
  documentExtractionsOnCompletion({
    projectId: input.projectId,
    documentId: input.documentId,
    documentVersion: input.documentVersion,
    agents: input.agents.map(({ agent, configVersion }) => ({
      agentId: agent.row.id,
      agentConfigVersion: configVersion,
      dimensionsKey: agentDimensionsKey(agent),
      extractions: input.extractions.get(agent.row.id) ?? [],
    })),
  })

export class Extraction extends Effect.Service<Extraction>()("@dxs/pipeline/Extraction", {
  effect: Effect.gen(function* () {
    const model = yield* LanguageModel
    const budget = yield* RequestBudget
    const run = (task: TaskRow, ctx: StageRun) =>
      Effect.gen(function* () {
        const p = payloadOf(task)
        const agentIds = p.agents.map((a) => a.agentId)
        // The run, the document, its pages and the task's agents in one read. The pages come with it when
        // they could fit a request for all the task's agents (a request for fewer may hold more; then they
        // are read when the windows are cut).
        const inputs = yield* extractionInputs(ctx.db, {
          runId: p.runId,
          documentId: p.documentId,
          maxChars: charsWithin(
            pageTokenBudget(budget, Math.min(budget.maxAgentsPerRequest, p.agents.length)),
          ),
          agentIds,
        })
        const runInfo = inputs.run
        if (!runInfo) return
        const document = inputs.document && projectDocumentOf(inputs.document, false)
        const loaded = new Map(
          (inputs.agents ?? []).map(({ plain_atomic_value_id: _, ...row }) => [row.id, projectAgentOf(row)]),
        )
        const agents = currentAgents(p, loaded, document)
        if (document === undefined || agents.length === 0) return yield* commitTask(ctx, p.runId, noUsage)

        const windows = yield* documentWindows(ctx.db, {
          agents: agents.map((a) => a.spec),
          documentId: document.id,
          documentName: document.name,
          tokenBudget: pageTokenBudget(budget, Math.min(budget.maxAgentsPerRequest, agents.length)),
          read: inputs,
        })
        const discovered = yield* discoverDimensions(model, document, agents, windows)
        const extracted = yield* extractAnswers(model, budget.maxAgentsPerRequest, {
          document,
          agents,
          windows,
          dimensionsOf: discovered.dimensionsOf,
          referenceDate: runInfo.referenceDate,
        })
        const usage = addUsage(discovered.usage, extracted.usage)

        // Atomic values before the completion, all at once (see `ensureAtomicValues`); those of agents
        // without dimensions came with the task's inputs once made.
        const kept = keptAnswers(agents, extracted.answers, document)
        const atomics = yield* ensureAtomicValues(
          ctx.db,
          runInfo.projectId,
          kept.map((k) => ({ agentId: k.agent.row.id, instances: k.instances })),
          new Map((inputs.agents ?? []).map((a) => [a.id, a.plain_atomic_value_id])),
        )
        const extractions = documentExtractions(kept, atomics)
        yield* commitTask(
          ctx,
          p.runId,
          usage,
          extractionWrites({
            projectId: runInfo.projectId,
            documentId: document.id,
            documentVersion: p.documentVersion,
            agents,
            extractions,
          }),
        )
      })
    return { run } satisfies StageShape
  }),
}) {}

/**
 * The value's citation checked against the window's pages, whichever provider answered: the provider's own
 * check when it made one (the `openai` provider's, which decided its retry), else checked here.
 */
const checkCitation = (pages: ReadonlyArray<PageText>, value: ExtractedValue, agent: AgentSpec): Citation =>
  value.citation ??
  groundCitation(pages, value.pageNumber, value.relevantPassage, value.value, agent.valueType, agent)
