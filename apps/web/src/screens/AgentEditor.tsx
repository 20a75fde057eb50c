/**
 * The agent editor: every field of an agent (extraction or derived), its dimension attachments, save
 * (PATCH of the changed fields; a 400 shows per field) and delete.
 */
import type { AgentType, DimensionSource, AgentValueType as ValueType } from "@dxs/domain/Enums"
import { SupportedAgentValueTypes } from "@dxs/domain/Enums"
import type { AgentDimensionRequest, Agent as AgentRecord, Dimension } from "@dxs/domain/Records"
import { useMutation } from "@tanstack/react-query"
import { type FormEvent, type ReactNode, useEffect, useMemo, useRef, useState } from "react"
import { api, errorMessage, fieldErrorsOf, seg } from "../api.ts"
import { ErrorAlert } from "../components.tsx"
import { AgentMentionField } from "./AgentMentionField.tsx"
import { FieldError } from "./DimensionsSection.tsx"

const PREFIX = "agent-edit"
const SUPPORTED_VALUE_TYPES: ReadonlyArray<ValueType> = SupportedAgentValueTypes

interface DraftDimension {
  readonly dimension_id: string
  readonly source: DimensionSource
  readonly dynamic: boolean
  /** The values as typed: comma-separated. */
  readonly values: string
}

interface Draft {
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

type TextField =
  | "extraction_instructions"
  | "unit"
  | "examples"
  | "inconsistency_instructions"
  | "resolution_instructions"
  | "value_if_not_found"
  | "derived_prompt"

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

export function AgentEditor({
  base,
  agent,
  agents,
  dimensions,
  onSaved,
  onDeleted,
  onClose,
}: {
  readonly base: string
  readonly agent: AgentRecord
  /** Every agent of the project (for `@` mentions). */
  readonly agents: ReadonlyArray<AgentRecord>
  readonly dimensions: ReadonlyArray<Dimension> | undefined
  readonly onSaved: (agent: AgentRecord) => void
  readonly onDeleted: () => void
  readonly onClose: () => void
}) {
  const [saved, setSaved] = useState<AgentRecord>(agent)
  const [draft, setDraft] = useState<Draft>(() => draftOf(agent))
  const [error, setError] = useState<string | undefined>(undefined)
  const [errors, setErrors] = useState<Readonly<Record<string, string>>>({})
  const [note, setNote] = useState("")
  const heading = useRef<HTMLHeadingElement>(null)
  const path = `${base}/agents/${seg(agent.id)}/`

  useEffect(() => {
    heading.current?.focus()
    heading.current?.scrollIntoView?.({ block: "start", behavior: "smooth" })
  }, [])

  const mentionNames = useMemo(
    () => agents.filter((a) => a.id !== agent.id).map((a) => a.name),
    [agents, agent.id],
  )

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
      const sent = body.dimensions as ReadonlyArray<AgentDimensionRequest> | undefined
      const byField: Record<string, string> = {}
      for (const [p, message] of Object.entries(fieldErrorsOf(err))) {
        const key = errorKey(p, sent)
        if (byField[key] === undefined) byField[key] = message
      }
      setErrors(byField)
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

  const remove = () => {
    if (!window.confirm(`Delete the agent "${saved.name}" and its results? This cannot be undone.`)) return
    setError(undefined)
    removeMutation.mutate()
  }

  /** aria-invalid and aria-describedby of a field (its hint, then its error). */
  const described = (key: string, hint?: string) => {
    const ids = [hint, errors[key] ? `${PREFIX}-${key}-error` : undefined].filter(Boolean).join(" ")
    return {
      "aria-invalid": errors[key] ? true : undefined,
      "aria-describedby": ids === "" ? undefined : ids,
    }
  }
  const fieldError = (key: string) => <FieldError id={`${PREFIX}-${key}-error`} message={errors[key]} />

  const text = (field: TextField, label: string, options: { rows?: number; hint?: ReactNode } = {}) => {
    const id = `${PREFIX}-${field}`
    const hintId = options.hint ? `${id}-hint` : undefined
    return (
      <div className="field">
        <label htmlFor={id}>{label}</label>
        {options.rows ? (
          <textarea
            id={id}
            rows={options.rows}
            value={draft[field]}
            onChange={(e) => set(field, e.target.value)}
            {...described(field, hintId)}
          />
        ) : (
          <input
            id={id}
            value={draft[field]}
            onChange={(e) => set(field, e.target.value)}
            {...described(field, hintId)}
          />
        )}
        {options.hint && (
          <span id={hintId} className="muted small">
            {options.hint}
          </span>
        )}
        {fieldError(field)}
      </div>
    )
  }

  const check = (
    field: "enable_complex_calculations_in_resolution" | "enable_web_search" | "is_evaluation",
    label: string,
  ) => {
    const id = `${PREFIX}-${field}`
    return (
      <div className="check-field">
        <input
          id={id}
          type="checkbox"
          checked={draft[field]}
          onChange={(e) => set(field, e.target.checked)}
          {...described(field)}
        />
        <label htmlFor={id}>{label}</label>
        {fieldError(field)}
      </div>
    )
  }

  const valueTypes = SUPPORTED_VALUE_TYPES.includes(draft.value_type)
    ? SUPPORTED_VALUE_TYPES
    : [...SUPPORTED_VALUE_TYPES, draft.value_type]
  const projectDimensions = dimensions ?? []
  const headingId = `${PREFIX}-heading`

  return (
    <section aria-labelledby={headingId} className="card agent-editor" data-testid="agent-editor">
      <div className="editor-head">
        <h3 id={headingId} ref={heading} tabIndex={-1}>
          Edit {saved.name}
        </h3>
        <button type="button" className="secondary" onClick={onClose}>
          Close editor
        </button>
      </div>
      {saved.dimensions.some((d) => d.source === "DOCUMENT") && (
        <p className="muted split-note" data-testid="split-by-document">
          Split by Document: this agent gives one value for each document.
        </p>
      )}
      <form className="stack" onSubmit={save} noValidate>
        <div className="field">
          <label htmlFor={`${PREFIX}-name`}>Name</label>
          <input
            id={`${PREFIX}-name`}
            required
            value={draft.name}
            onChange={(e) => set("name", e.target.value)}
            {...described("name")}
          />
          {fieldError("name")}
        </div>

        <div className="field-row">
          <div className="field">
            <label htmlFor={`${PREFIX}-agent_type`}>Agent type</label>
            <select
              id={`${PREFIX}-agent_type`}
              value={draft.agent_type}
              onChange={(e) => set("agent_type", e.target.value === "derived" ? "derived" : "extraction")}
              {...described("agent_type")}
            >
              <option value="extraction">Extraction: read from the documents</option>
              <option value="derived">Derived: computed from other agents</option>
            </select>
            {fieldError("agent_type")}
          </div>
          <div className="field">
            <label htmlFor={`${PREFIX}-value_type`}>Type of value</label>
            <select
              id={`${PREFIX}-value_type`}
              value={draft.value_type}
              onChange={(e) => set("value_type", e.target.value as ValueType)}
              {...described("value_type")}
            >
              {valueTypes.map((t) => (
                <option key={t} value={t}>
                  {SUPPORTED_VALUE_TYPES.includes(t) ? t : `${t} (legacy)`}
                </option>
              ))}
            </select>
            {fieldError("value_type")}
          </div>
          {text("unit", "Unit")}
        </div>

        {text("extraction_instructions", "Extraction instructions", { rows: 3 })}

        <div className="field">
          <label htmlFor={`${PREFIX}-derived_prompt`}>Derived prompt</label>
          <AgentMentionField
            id={`${PREFIX}-derived_prompt`}
            value={draft.derived_prompt}
            onChange={(v) => set("derived_prompt", v)}
            names={mentionNames}
            rows={3}
            invalid={errors.derived_prompt !== undefined}
            describedBy={described("derived_prompt", `${PREFIX}-derived_prompt-hint`)["aria-describedby"]}
          />
          <span id={`${PREFIX}-derived_prompt-hint`} className="muted small">
            For derived agents: how to compute the value. Type @ to mention another agent.
          </span>
          {fieldError("derived_prompt")}
        </div>

        {text("examples", "Examples", { rows: 2 })}
        {text("value_if_not_found", "Value if not found")}
        {text("inconsistency_instructions", "Inconsistency instructions", { rows: 2 })}
        {text("resolution_instructions", "Resolution instructions", { rows: 2 })}

        <fieldset className="fieldset">
          <legend>Options</legend>
          {check("enable_complex_calculations_in_resolution", "Enable complex calculations in resolution")}
          {check("enable_web_search", "Enable web search")}
          {check("is_evaluation", "Evaluation agent (its value is always a number)")}
        </fieldset>

        <fieldset
          className="fieldset"
          aria-describedby={errors.dimensions ? `${PREFIX}-dimensions-error` : undefined}
        >
          <legend>Dimensions</legend>
          {fieldError("dimensions")}
          {dimensions === undefined ? (
            <p className="muted small">Loading dimensions…</p>
          ) : projectDimensions.length === 0 ? (
            <p className="muted small">
              This project has no dimensions: create one in the Dimensions section.
            </p>
          ) : (
            projectDimensions.map((d) => {
              const attached = draft.dimensions.find((x) => x.dimension_id === d.id)
              const key = `dimension:${d.id}`
              const checkId = `${PREFIX}-dim-${d.id}`
              const valuesId = `${PREFIX}-dim-values-${d.id}`
              const errorId = `${PREFIX}-${key}-error`
              return (
                <div key={d.id} className="dimension-choice" data-dimension-id={d.id}>
                  <div className="check-field">
                    <input
                      id={checkId}
                      type="checkbox"
                      checked={attached !== undefined}
                      onChange={(e) => toggleDimension(d, e.target.checked)}
                      aria-describedby={
                        errors[key] && (!attached || d.source !== "CUSTOM") ? errorId : undefined
                      }
                    />
                    <label htmlFor={checkId}>Split by {d.name}</label>
                    {d.source !== "CUSTOM" && (
                      <span className="muted small">(values follow the documents)</span>
                    )}
                  </div>
                  {attached && d.source === "CUSTOM" && (
                    <fieldset className="values-choice">
                      <legend>{d.name} values</legend>
                      <div className="check-field">
                        <input
                          id={`${checkId}-dynamic`}
                          type="radio"
                          name={`${checkId}-mode`}
                          checked={attached.dynamic}
                          onChange={() => setDimension(d.id, { dynamic: true })}
                        />
                        <label htmlFor={`${checkId}-dynamic`}>Values discovered from documents</label>
                      </div>
                      <div className="check-field">
                        <input
                          id={`${checkId}-static`}
                          type="radio"
                          name={`${checkId}-mode`}
                          checked={!attached.dynamic}
                          onChange={() => setDimension(d.id, { dynamic: false })}
                        />
                        <label htmlFor={`${checkId}-static`}>Listed values</label>
                      </div>
                      {!attached.dynamic && (
                        <div className="field">
                          <label htmlFor={valuesId}>Values of {d.name}</label>
                          <input
                            id={valuesId}
                            value={attached.values}
                            placeholder={d.example_values || undefined}
                            onChange={(e) => setDimension(d.id, { values: e.target.value })}
                            aria-invalid={errors[key] ? true : undefined}
                            aria-describedby={`${valuesId}-hint${errors[key] ? ` ${errorId}` : ""}`}
                          />
                          <span id={`${valuesId}-hint`} className="muted small">
                            Comma-separated
                          </span>
                        </div>
                      )}
                      {fieldError(key)}
                    </fieldset>
                  )}
                  {(!attached || d.source !== "CUSTOM") && fieldError(key)}
                </div>
              )
            })
          )}
        </fieldset>

        <ErrorAlert message={error} />
        <div className="form-actions">
          <button type="submit" disabled={busy}>
            Save agent
          </button>
          <button type="button" className="danger" disabled={busy} onClick={remove}>
            Delete agent
          </button>
          <p role="status" className="saved-note">
            {note}
          </p>
        </div>
      </form>
    </section>
  )
}
