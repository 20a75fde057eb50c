import type { AgentRow, Conn, DimensionRow } from "@dxs/db"
import { Db, transaction, withDb } from "@dxs/db"
import type { AgentDimensionAttachment, AgentReferenceRow } from "@dxs/db/repositories/Agents"
import * as AgentsRepo from "@dxs/db/repositories/Agents"
import * as DimensionsRepo from "@dxs/db/repositories/Dimensions"
import * as ProjectReads from "@dxs/db/repositories/ProjectReads"
import { type AgentExtractionConfig, clearsExtractions } from "@dxs/domain/AgentChange"
import {
  type AgentReference,
  AmbiguousAgentReference,
  dependencyGraph,
  findCycle,
  findReferences,
  resolveAgentReference,
} from "@dxs/domain/AgentReferences"
import type { AgentDimensionRequest, AgentPatchRequest } from "@dxs/domain/contract/Agent"
import { isDraftAgent } from "@dxs/domain/Draft"
import type { AgentType, AgentValueType, DimensionSource } from "@dxs/domain/Enums"
import type { Agent, AgentDimension } from "@dxs/domain/Records"
import { type AgentState, deriveAgentStates, loadAgentStatesOfProjects } from "@dxs/pipeline/run/AgentStates"
import { Context, Effect, Either } from "effect"
import { CurrentOrganization } from "./CurrentOrganization.ts"
import { isSystemDimension } from "./Dimensions.ts"
import { BadRequest, NotFound } from "./Errors.ts"
import { validName } from "./Inputs.ts"
import { byProject, checkProject, oneProject } from "./Projects.ts"
import { iso } from "./Time.ts"

/** A dimension request entry inside an agent body. */
export type AgentDimensionInput = AgentDimensionRequest

/** An agent body: every field optional (create and replace require `name`, checked by the adapter's schema). */
export type AgentInput = AgentPatchRequest

/** How an update treats omitted fields: `patch` keeps them, `put` resets them to their defaults. */
export type AgentWriteMode = "create" | "patch" | "put"

interface AgentFields extends AgentExtractionConfig {
  readonly name: string
  readonly value_if_not_found: string
  readonly agent_type: AgentType
  readonly derived_prompt: string
  readonly is_evaluation: boolean
}

const defaults: Omit<AgentFields, "name"> = {
  extraction_instructions: "",
  value_type: "string",
  unit: "",
  examples: "",
  inconsistency_instructions: "",
  resolution_instructions: "",
  enable_complex_calculations_in_resolution: false,
  enable_web_search: false,
  value_if_not_found: "",
  agent_type: "extraction",
  derived_prompt: "",
  is_evaluation: false,
}

const fieldNames = ["name", ...(Object.keys(defaults) as Array<keyof typeof defaults>)] as const

const supplied = (input: AgentInput): Partial<AgentFields> =>
  Object.fromEntries(
    fieldNames
      .map((k) => [k, k === "name" ? input.name?.trim() : input[k]] as const)
      .filter(([, v]) => v !== undefined),
  )

const fieldsOf = (row: AgentRow): AgentFields => ({
  name: row.name,
  extraction_instructions: row.extraction_instructions,
  value_type: row.value_type as AgentValueType,
  unit: row.unit,
  examples: row.examples,
  inconsistency_instructions: row.inconsistency_instructions,
  resolution_instructions: row.resolution_instructions,
  enable_complex_calculations_in_resolution: row.enable_complex_calculations_in_resolution,
  enable_web_search: row.enable_web_search,
  value_if_not_found: row.value_if_not_found,
  agent_type: row.agent_type as AgentType,
  derived_prompt: row.derived_prompt,
  is_evaluation: row.is_evaluation,
})

/** The agent's fields after the write. An evaluation agent's value type is always `number`. */
const finalFields = (
  mode: AgentWriteMode,
  input: AgentInput,
  existing: AgentRow | undefined,
): AgentFields => {
  const base: AgentFields =
    mode === "patch" && existing
      ? fieldsOf(existing)
      : { ...defaults, name: "", ...(existing ? { agent_type: existing.agent_type as AgentType } : {}) }
  const merged = { ...base, ...supplied(input) }
  return merged.is_evaluation ? { ...merged, value_type: "number" } : merged
}

const bad = (path: string, message: string, detail?: string) =>
  BadRequest.of(detail ?? `${path}: ${message}`, [{ path, message }])

// ---------------------------------------------------------------------------------------------------------
// Reading

/**
 * Response records for agent rows (in the given order), with their dimensions and references; the rows
 * may belong to several projects, read together with as many statements as for one.
 */
const toAgents = (db: Conn, rows: ReadonlyArray<AgentRow>, withSystemValues = true) =>
  Effect.gen(function* () {
    if (rows.length === 0) return []
    const ids = rows.map((r) => r.id)
    const attachments = yield* AgentsRepo.attachmentsOf(db, { agentIds: ids })
    const references = yield* AgentsRepo.referencesOf(db, ids)
    const systemValues = withSystemValues
      ? yield* systemValuesOf(db, attachments)
      : new Map<string, ReadonlyArray<string>>()
    const projectStates = yield* loadAgentStatesOfProjects(
      db,
      rows.map((r) => r.project_id),
    )
    return rows.map((row) =>
      agentRecord(
        row,
        attachments.filter((a) => a.agent_id === row.id),
        references.filter((r) => r.agent_id === row.id),
        systemValues,
        projectStates.get(row.project_id)?.get(row.id),
      ),
    )
  })

/** The values of the system-managed dimensions (the Document dimension, tags) among these attachments. */
const systemValuesOf = (db: Conn, attachments: ReadonlyArray<AgentDimensionAttachment>) =>
  DimensionsRepo.systemDimensionValues(db, [
    ...new Map(
      attachments.filter((a) => isSystemDimension(a.source)).map((a) => [a.dimension_id, a]),
    ).values(),
  ])

/** The response record of an agent's row, its attachments (in order) and references, and its state. */
const agentRecord = (
  row: AgentRow,
  attachments: ReadonlyArray<AgentDimensionAttachment>,
  references: ReadonlyArray<AgentReferenceRow>,
  systemValues: ReadonlyMap<string, ReadonlyArray<string>>,
  state: AgentState | undefined,
): Agent => {
  // In the order of the schema's fields (the list is sent as JSON text as it is, see the REST handler).
  const { agent_type, derived_prompt, is_evaluation, ...fields } = fieldsOf(row)
  return {
    id: row.id,
    project_id: row.project_id,
    template_id: row.template_id,
    dimensions: attachments.map((a, order): AgentDimension => {
      const values = isSystemDimension(a.source)
        ? [...(systemValues.get(a.dimension_id) ?? [])]
        : a.are_values_dynamic
          ? [] // discovered from the documents by the pipeline
          : [...(a.values ?? [])]
      return {
        dimension_id: a.dimension_id,
        dimension_mapping_id: a.id,
        name: a.name,
        description: a.description,
        values,
        value_count: values.length,
        order,
        are_values_dynamic: a.are_values_dynamic,
        source: a.source as DimensionSource,
      }
    }),
    created_at: iso(row.created_at),
    extraction_status: state?.extractionStatus ?? "Pending",
    requires_attention: state?.requiresAttention ?? false,
    improvement_tip_summary: row.improvement_tip_summary,
    ...fields,
    inconsistency_summary: row.inconsistency_summary,
    agent_type,
    derived_prompt,
    is_evaluation,
    derived_agent_references: references.map((r) => ({
      agent_id: r.referenced_agent_id,
      agent_name: r.name,
    })),
  }
}

/** An agent of the project, or NotFound; `lock` takes a row lock for an update. */
const findAgent = (db: Conn, projectId: string, id: string, lock = false) =>
  Effect.flatMap(AgentsRepo.findAgent(db, projectId, id, lock), (row) =>
    row ? Effect.succeed(row) : Effect.fail(NotFound.of("Agent", id)),
  )

const toAgent = (db: Conn, row: AgentRow) => Effect.map(toAgents(db, [row]), (agents) => agents[0]!)

// ---------------------------------------------------------------------------------------------------------
// Dimensions of an agent

interface PlannedAttachment {
  readonly dimension: DimensionRow
  readonly dynamic: boolean
  readonly values: ReadonlyArray<string>
}

const attachmentPlan = (
  entries: ReadonlyArray<AgentDimensionInput>,
  dimensions: ReadonlyMap<string, DimensionRow>,
  current: ReadonlyMap<string, { are_values_dynamic: boolean; values: ReadonlyArray<string> }>,
) =>
  Effect.gen(function* () {
    const seen = new Set<string>()
    const plan: Array<PlannedAttachment> = []
    for (const [i, entry] of entries.entries()) {
      const path = `dimensions/${i}`
      if (seen.has(entry.dimension_id))
        return yield* bad(
          `${path}/dimension_id`,
          "appears more than once",
          `dimension ${entry.dimension_id} appears more than once in dimensions`,
        )
      seen.add(entry.dimension_id)
      const dimension = dimensions.get(entry.dimension_id)
      if (!dimension)
        return yield* bad(
          `${path}/dimension_id`,
          "not a dimension of this project",
          `dimensions/${i}: ${entry.dimension_id} is not a dimension of this project`,
        )
      const attached = current.get(dimension.id)
      // An omitted flag means static when values are given, else the attachment's current setting
      // (static for a new attachment).
      const dynamic =
        entry.are_values_dynamic ??
        (entry.values !== undefined && entry.values.length > 0
          ? false
          : (attached?.are_values_dynamic ?? false))
      if (isSystemDimension(dimension.source) || dynamic) {
        // System values mirror the documents; dynamic ones are discovered at extraction time.
        plan.push({ dimension, dynamic, values: [] })
        continue
      }
      const given = entry.values ?? (attached && !attached.are_values_dynamic ? attached.values : [])
      const values = given.map((v) => v.trim())
      if (values.length === 0)
        return yield* bad(
          `${path}/values`,
          "required and non-empty unless are_values_dynamic is true",
          `dimensions/${i}: dimension "${dimension.name}" needs a non-empty values array unless are_values_dynamic is true`,
        )
      if (values.some((v) => v === ""))
        return yield* bad(`${path}/values`, "values must not be empty strings")
      const duplicate = values.find((v, j) => values.indexOf(v) !== j)
      if (duplicate !== undefined)
        return yield* bad(`${path}/values`, `value ${JSON.stringify(duplicate)} appears more than once`)
      plan.push({ dimension, dynamic, values })
    }
    return plan
  })

/**
 * Makes the agent's attachments exactly the entries, in order (an attachment that stays keeps its id),
 * applies the entries' dimension-wide changes, and on create attaches the auto-attach dimensions the
 * body does not mention.
 */
const setDimensions = (
  trx: Conn,
  projectId: string,
  agentId: string,
  entries: ReadonlyArray<AgentDimensionInput>,
  autoAttach: boolean,
) =>
  Effect.gen(function* () {
    const dimensionRows = yield* DimensionsRepo.dimensionsOfProject(trx, projectId)
    const currentRows = yield* AgentsRepo.attachmentsOf(trx, { agentIds: [agentId] })
    const current = new Map(currentRows.map((r) => [r.dimension_id, r]))
    const plan = yield* attachmentPlan(entries, new Map(dimensionRows.map((d) => [d.id, d])), current)

    // Dimension-wide changes: description and value_type apply to the dimension for every agent.
    for (const entry of entries) {
      const set = Object.fromEntries(
        Object.entries({ description: entry.description, value_type: entry.value_type ?? undefined }).filter(
          ([, v]) => v !== undefined,
        ),
      )
      if (Object.keys(set).length > 0) yield* DimensionsRepo.changeDimension(trx, entry.dimension_id, set)
    }

    const keep = plan.map((p) => p.dimension.id)
    yield* AgentsRepo.detachDimensionsExcept(trx, agentId, keep)

    const planned = [...plan]
    if (autoAttach) {
      for (const dimension of dimensionRows) {
        if (!dimension.auto_attach_to_new_agents || keep.includes(dimension.id)) continue
        if (isSystemDimension(dimension.source)) {
          planned.push({ dimension, dynamic: false, values: [] })
          continue
        }
        // A custom dimension takes the values of its most recent attachment, or is discovered if none.
        const latest = yield* AgentsRepo.latestAttachmentElsewhere(trx, dimension.id, agentId)
        planned.push(
          latest && !latest.are_values_dynamic && latest.values.length > 0
            ? { dimension, dynamic: false, values: latest.values }
            : { dimension, dynamic: true, values: [] },
        )
      }
    }

    for (const [order, p] of planned.entries())
      yield* AgentsRepo.saveAttachment(trx, current.get(p.dimension.id)?.id, agentId, p.dimension.id, {
        are_values_dynamic: p.dynamic,
        values: p.values,
        order,
      })

    // add_to_all_agents: every other agent of the project gets the dimension (agents that already have
    // it keep their attachment), and so will every future agent.
    for (const [i, entry] of entries.entries()) {
      if (entry.add_to_all_agents !== true) continue
      const p = plan[i]!
      yield* DimensionsRepo.changeDimension(trx, p.dimension.id, { auto_attach_to_new_agents: true })
      yield* AgentsRepo.attachToOtherAgents(trx, projectId, agentId, p.dimension.id, p.dynamic, p.values)
    }
  })

// ---------------------------------------------------------------------------------------------------------
// Derived agent references

/**
 * Stores a derived agent's references: the given ones (or, when not given, the stored ones) plus the
 * agents mentioned as `@Name` in its prompt; then rejects a cycle through derived agents. An extraction
 * agent has none.
 */
const setReferences = (
  trx: Conn,
  projectId: string,
  agentId: string,
  fields: AgentFields,
  given: ReadonlyArray<AgentReference> | undefined,
) =>
  Effect.gen(function* () {
    if (fields.agent_type !== "derived") {
      yield* AgentsRepo.replaceReferences(trx, agentId, [])
      return
    }
    // Serialises reference changes within the project so two saves cannot close a cycle together.
    yield* AgentsRepo.lockReferencesOfProject(trx, projectId)
    const agents = yield* AgentsRepo.agentNamesOfProject(trx, projectId)
    const ids: Array<string> = []
    const add = (id: string) => {
      if (!ids.includes(id)) ids.push(id)
    }
    if (given !== undefined) {
      for (const [i, reference] of given.entries()) {
        const resolved = resolveAgentReference(reference, agents)
        if (Either.isLeft(resolved))
          return yield* bad(
            `derived_agent_references/${i}`,
            resolved.left.message,
            `derived_agent_references/${i}: ${resolved.left.message}`,
          )
        add(resolved.right.id)
      }
    } else {
      for (const id of yield* AgentsRepo.referencedIds(trx, agentId)) add(id)
    }
    // One grammar with the evaluator: after a bare `@`, the longest agent or document name that follows.
    const prompt = fields.derived_prompt
    const documentNames = prompt.includes("@") ? yield* AgentsRepo.documentNamesOfProject(trx, projectId) : []
    for (const reference of findReferences(prompt, [...agents.map((a) => a.name), ...documentNames])) {
      const name = reference.agentName
      if (name === null)
        return yield* bad(
          "derived_prompt",
          `@${reference.written} does not name an agent of this project`,
          `derived_prompt mentions @${reference.written}, but no agent (or document) of this project has that name`,
        )
      const matches = agents.filter((a) => a.name === name)
      const [only, ...others] = matches
      if (only !== undefined && others.length === 0) add(only.id)
      else if (only !== undefined) {
        const ambiguous = AmbiguousAgentReference.of(
          { agent_name: name },
          matches.map((a) => a.id),
        )
        return yield* bad(
          "derived_prompt",
          ambiguous.message,
          `derived_prompt: @${name}: ${ambiguous.message}`,
        )
      }
      // Otherwise the prompt mentions a document of the project by its file name.
    }

    yield* AgentsRepo.replaceReferences(trx, agentId, ids)

    const edges = yield* AgentsRepo.derivedReferenceEdges(trx, projectId)
    const graph = new Map<string, Array<string>>([[agentId, []]])
    for (const e of edges) {
      const list = graph.get(e.agent_id) ?? []
      list.push(e.referenced_agent_id)
      graph.set(e.agent_id, list)
    }
    const cycle = findCycle(dependencyGraph(graph))
    if (cycle !== undefined) {
      const names = new Map(agents.map((a) => [a.id, a.name]))
      const label = (id: string) => JSON.stringify(names.get(id) ?? id)
      const detail =
        cycle.length === 2
          ? `derived agent ${label(cycle[0]!)} cannot reference itself`
          : `derived agents form a reference cycle: ${cycle.map(label).join(" -> ")}`
      return yield* BadRequest.of(detail, [{ path: "derived_agent_references", message: detail }])
    }
  })

// ---------------------------------------------------------------------------------------------------------

const write = (projectId: string, agentId: string | undefined, input: AgentInput, mode: AgentWriteMode) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    return yield* transaction((trx) => writeAgent(trx, org.id, projectId, agentId, input, mode))
  })

/** Creates (`agentId` undefined) or updates an agent with its dimensions and references, inside `trx`. */
export const writeAgent = (
  trx: Conn,
  orgId: string,
  projectId: string,
  agentId: string | undefined,
  input: AgentInput,
  mode: AgentWriteMode,
) =>
  Effect.gen(function* () {
    yield* validName(input.name)
    if (mode !== "patch" && input.name === undefined) return yield* bad("name", "is required")
    return yield* Effect.gen(function* () {
      yield* checkProject(trx, orgId, projectId)
      const existing = agentId === undefined ? undefined : yield* findAgent(trx, projectId, agentId, true)
      const fields = finalFields(mode, input, existing)
      const is_draft = isDraftAgent(fields)
      let row: AgentRow
      if (existing === undefined) {
        row = yield* AgentsRepo.insertAgent(trx, projectId, { ...fields, is_draft })
      } else {
        // Launch rule 7: a changed clearing field makes the agent's extractions stale.
        const clears = clearsExtractions(fieldsOf(existing), { ...fields })
        row = yield* AgentsRepo.updateAgent(trx, existing.id, { ...fields, is_draft }, clears)
      }
      const entries = mode === "patch" ? input.dimensions : (input.dimensions ?? [])
      if (entries !== undefined) yield* setDimensions(trx, projectId, row.id, entries, mode === "create")
      const referencesTouched =
        mode !== "patch" ||
        input.agent_type !== undefined ||
        input.derived_prompt !== undefined ||
        input.derived_agent_references !== undefined
      if (referencesTouched)
        yield* setReferences(
          trx,
          projectId,
          row.id,
          fields,
          mode === "patch" ? input.derived_agent_references : (input.derived_agent_references ?? []),
        )
      return yield* toAgent(trx, row)
    })
  })

export interface AgentFilter {
  readonly isEvaluation?: boolean | undefined
  /**
   * Beyond the contract: `custom` lists the values of custom dimensions only; system-managed ones (the
   * Document dimension, tags) come with no values (a list as long as the project's documents otherwise).
   */
  readonly dimensionValues?: "all" | "custom" | undefined
}

/**
 * Each project's agents, most recently created first (see `list`); projects not of the current
 * organisation are absent.
 */
const listForProjects = (projectIds: ReadonlyArray<string>, filter: AgentFilter = {}) =>
  Effect.gen(function* () {
    const org = yield* CurrentOrganization
    return yield* withDb((db) =>
      Effect.gen(function* () {
        const listing = yield* ProjectReads.agentListing(db, org.id, projectIds, filter)
        const systemValues =
          filter.dimensionValues === "custom"
            ? new Map<string, ReadonlyArray<string>>()
            : yield* systemValuesOf(
                db,
                listing.agents.flatMap((a) => a.attachments),
              )
        const states = deriveAgentStates(listing.agents.map((a) => a.state))
        const agents = listing.agents.map((a) =>
          agentRecord(a, a.attachments, a.references, systemValues, states.get(a.id)),
        )
        return byProject(listing.projectIds, agents, (a) => a.project_id)
      }),
    )
  })

export class Agents extends Effect.Service<Agents>()("@dxs/services/Agents", {
  effect: Effect.gen(function* () {
    const storage = Context.make(Db, yield* Db)
    const provide = Effect.provide(storage)
    return {
      /** The project's agents, most recently created first; `isEvaluation` lists only evaluation agents (the evaluation page) or only the others. */
      list: (projectId: string, filter: AgentFilter = {}) =>
        Effect.flatMap(listForProjects([projectId], filter), (lists) => oneProject(projectId, lists)).pipe(
          provide,
        ),

      /** For each of the projects that is the organisation's (the others are absent), its `list`. */
      listForProjects: (projectIds: ReadonlyArray<string>, filter?: AgentFilter) =>
        listForProjects(projectIds, filter).pipe(provide),

      get: (projectId: string, id: string) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          return yield* withDb((db) =>
            Effect.gen(function* () {
              yield* checkProject(db, org.id, projectId)
              return yield* toAgent(db, yield* findAgent(db, projectId, id))
            }),
          )
        }).pipe(provide),

      create: (projectId: string, input: AgentInput) =>
        write(projectId, undefined, input, "create").pipe(provide),

      /** `patch` changes only supplied fields; `put` replaces them (omitted ones reset, the type is kept). */
      update: (projectId: string, id: string, input: AgentInput, mode: "patch" | "put") =>
        write(projectId, id, input, mode).pipe(provide),

      remove: (projectId: string, id: string) =>
        Effect.gen(function* () {
          const org = yield* CurrentOrganization
          yield* transaction((trx) =>
            Effect.gen(function* () {
              yield* checkProject(trx, org.id, projectId)
              yield* findAgent(trx, projectId, id, true)
              yield* AgentsRepo.deleteAgent(trx, id)
            }),
          )
        }).pipe(provide),
    }
  }),
}) {}
