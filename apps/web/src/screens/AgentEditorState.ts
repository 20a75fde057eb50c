/**
 * The state of the agent editor (AgentEditor.tsx): the draft of the agent's fields as typed, what differs
 * from the saved agent (the PATCH body), where each error of the API belongs, and the save and delete.
 */
import type { AgentType, DimensionSource, AgentValueType as ValueType } from "@dxs/domain/Enums"
import type { AgentDimensionRequest, Agent as AgentRecord, Dimension } from "@dxs/domain/Records"
import { useMutation } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import { api, errorMessage, fieldErrorsOf, seg } from "../api.ts"

export interface DraftDimension {
  readonly dimension_id: string
  readonly source: DimensionSource
  readonly dynamic: boolean
  /** The values as typed: comma-separated. */
  readonly values: string
}

export interface Draft {
  readonly name: string
  readonly extraction_instructions: string
  readonly value_type: ValueType
  readonly unit: string
  readonly examples: string
  readonly inconsistency_instructions: string
  readonly resolution_instructions: string
  readonly enable_complex_calculations_in_resolution: boolean
  readonly enable_web_search: boolean
  readonly value_if_not_found: string
  readonly agent_type: AgentType
  readonly derived_prompt: string
  readonly is_evaluation: boolean
  readonly dimensions: ReadonlyArray<DraftDimension>
}

const SCALAR_FIELDS = [
  "extraction_instructions",
  "value_type",
  "unit",
  "examples",
  "inconsistency_instructions",
  "resolution_instructions",
  "enable_complex_calculations_in_resolution",
  "enable_web_search",
  "value_if_not_found",
  "agent_type",
  "derived_prompt",
  "is_evaluation",
] as const

const draftOf = (agent: AgentRecord): Draft => ({
  name: agent.name,
  extraction_instructions: agent.extraction_instructions,
  value_type: agent.value_type,
  unit: agent.unit,
  examples: agent.examples,
  inconsistency_instructions: agent.inconsistency_instructions,
  resolution_instructions: agent.resolution_instructions,
  enable_complex_calculations_in_resolution: agent.enable_complex_calculations_in_resolution,
  enable_web_search: agent.enable_web_search,
  value_if_not_found: agent.value_if_not_found,
  agent_type: agent.agent_type,
  derived_prompt: agent.derived_prompt,
  is_evaluation: agent.is_evaluation,
  dimensions: [...agent.dimensions]
    .sort((a, b) => a.order - b.order)
    .map((d) => ({
      dimension_id: d.dimension_id,
      source: d.source,
      dynamic: d.are_values_dynamic,
      values: d.values.join(", "),
    })),
})

/** Comma-separated values as a list, blanks dropped. */
const parseValues = (text: string): ReadonlyArray<string> =>
  text
    .split(",")
    .map((v) => v.trim())
    .filter((v) => v !== "")

const dimensionRequest = (d: DraftDimension): AgentDimensionRequest =>
  d.source !== "CUSTOM"
    ? { dimension_id: d.dimension_id }
    : d.dynamic
      ? { dimension_id: d.dimension_id, are_values_dynamic: true }
      : { dimension_id: d.dimension_id, are_values_dynamic: false, values: parseValues(d.values) }

const sameDimensions = (a: ReadonlyArray<DraftDimension>, b: ReadonlyArray<DraftDimension>): boolean =>
  a.length === b.length &&
  a.every((x, i) => {
    const y = b[i]!
    if (x.dimension_id !== y.dimension_id) return false
    if (x.source !== "CUSTOM") return true
    if (x.dynamic !== y.dynamic) return false
    return x.dynamic || parseValues(x.values).join("\u0000") === parseValues(y.values).join("\u0000")
  })

/** The PATCH body: only the fields that differ from the agent. */
const changesOf = (agent: AgentRecord, draft: Draft): Record<string, unknown> => {
  const body: Record<string, unknown> = {}
  if (draft.name.trim() !== agent.name) body.name = draft.name.trim()
  for (const field of SCALAR_FIELDS) if (draft[field] !== agent[field]) body[field] = draft[field]
  if (!sameDimensions(draft.dimensions, draftOf(agent).dimensions))
    body.dimensions = draft.dimensions.map(dimensionRequest)
  return body
}

/**
 * Where an error of the API belongs: a field of the form (`name`, …), a dimension attachment
 * (`dimension:<id>`, from `dimensions/<i>/…` of the request), else the prompt for agent references.
 */
const errorKey = (path: string, sent: ReadonlyArray<AgentDimensionRequest> | undefined): string => {
  const dim = /^dimensions\/(\d+)/.exec(path)
  if (dim) {
    const entry = sent?.[Number(dim[1])]
    return entry ? `dimension:${entry.dimension_id}` : "dimensions"
  }
  if (path.startsWith("derived_agent_references")) return "derived_prompt"
  return path.split("/")[0] ?? path
}

/** The API's field errors of a refused save, each under the key of the part of the form it belongs to. */
const errorsByField = (err: unknown, body: Record<string, unknown>): Record<string, string> => {
  const sent = body.dimensions as ReadonlyArray<AgentDimensionRequest> | undefined
  const byField: Record<string, string> = {}
  for (const [p, message] of Object.entries(fieldErrorsOf(err))) {
    const key = errorKey(p, sent)
    if (byField[key] === undefined) byField[key] = message
  }
  return byField
}

/** The draft being edited with its errors, as the fields of the form read and change it. */
export interface DraftForm {
  readonly draft: Draft
  /** The API's field errors of the last save, by field (`dimension:<id>` for an attachment). */
  readonly errors: Readonly<Record<string, string>>
  readonly set: <K extends keyof Draft>(field: K, value: Draft[K]) => void
}

/**
 * The editor of one agent: the last saved agent, the draft as typed, the save (only the changed fields)
 * and the delete, with their error, field errors and note.
 */
export function useAgentEditor(
  base: string,
  agent: AgentRecord,
  onSaved: (agent: AgentRecord) => void,
  onDeleted: () => void,
) {
  const [saved, setSaved] = useState<AgentRecord>(agent)
  const [draft, setDraft] = useState<Draft>(() => draftOf(agent))
  const [error, setError] = useState<string | undefined>(undefined)
  const [errors, setErrors] = useState<Readonly<Record<string, string>>>({})
  const [note, setNote] = useState("")
  const path = `${base}/agents/${seg(agent.id)}/`

  const set = <K extends keyof Draft>(field: K, value: Draft[K]) => {
    setDraft((d) => ({ ...d, [field]: value }))
    setNote("")
  }

  const setDimension = (id: string, patch: Partial<DraftDimension>) =>
    set(
      "dimensions",
      draft.dimensions.map((d) => (d.dimension_id === id ? { ...d, ...patch } : d)),
    )

  const toggleDimension = (dimension: Dimension, on: boolean) => {
    if (!on) {
      set(
        "dimensions",
        draft.dimensions.filter((d) => d.dimension_id !== dimension.id),
      )
      return
    }
    const before = draftOf(saved).dimensions.find((d) => d.dimension_id === dimension.id)
    set("dimensions", [
      ...draft.dimensions,
      before ?? { dimension_id: dimension.id, source: dimension.source, dynamic: false, values: "" },
    ])
  }

  const saveMutation = useMutation({
    mutationFn: (body: ReturnType<typeof changesOf>) => api.patch<AgentRecord>(path, body),
    onSuccess: (updated) => {
      setSaved(updated)
      setDraft(draftOf(updated))
      setNote("Saved.")
      onSaved(updated)
    },
    onError: (err, body) => {
      setError(errorMessage(err))
      setErrors(errorsByField(err, body))
    },
  })
  const removeMutation = useMutation({
    mutationFn: () => api.del(path),
    onSuccess: () => onDeleted(),
    onError: (err) => setError(errorMessage(err)),
  })
  const busy = saveMutation.isPending || removeMutation.isPending

  const save = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    const body = changesOf(saved, draft)
    setError(undefined)
    setErrors({})
    if (Object.keys(body).length === 0) {
      setNote("No changes to save.")
      return
    }
    setNote("")
    saveMutation.mutate(body)
  }

  /** Delete the agent (once confirmed): resolves when deleted, rejects with the failure. */
  const remove = async (): Promise<void> => {
    setError(undefined)
    await removeMutation.mutateAsync()
  }

  const form: DraftForm = { draft, errors, set }
  return { saved, form, error, note, busy, setDimension, toggleDimension, save, remove }
}
