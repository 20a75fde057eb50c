/**
 * The agent editor: every field of an agent (extraction or derived), its dimension attachments, save
 * (PATCH of the changed fields; a 400 shows per field) and delete.
 */
import type { AgentValueType as ValueType } from "@dxs/domain/Enums"
import { SupportedAgentValueTypes } from "@dxs/domain/Enums"
import type { Agent as AgentRecord, Dimension } from "@dxs/domain/Records"
import { type ReactNode, useEffect, useMemo, useRef } from "react"
import { ErrorAlert, useConfirm } from "../components.tsx"
import { type DraftDimension, type DraftForm, useAgentEditor } from "./AgentEditorState.ts"
import { AgentMentionField } from "./AgentMentionField.tsx"
import { FieldError } from "./DimensionsSection.tsx"

const PREFIX = "agent-edit"
const SUPPORTED_VALUE_TYPES: ReadonlyArray<ValueType> = SupportedAgentValueTypes

type TextField =
  | "extraction_instructions"
  | "unit"
  | "examples"
  | "inconsistency_instructions"
  | "resolution_instructions"
  | "value_if_not_found"
  | "derived_prompt"

type CheckField = "enable_complex_calculations_in_resolution" | "enable_web_search" | "is_evaluation"

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
  const { saved, form, error, note, busy, setDimension, toggleDimension, save, remove } = useAgentEditor(
    base,
    agent,
    onSaved,
    onDeleted,
  )
  const heading = useRef<HTMLHeadingElement>(null)
  const confirm = useConfirm()

  useEffect(() => {
    heading.current?.focus()
    heading.current?.scrollIntoView?.({ block: "start", behavior: "smooth" })
  }, [])

  const mentionNames = useMemo(
    () => agents.filter((a) => a.id !== agent.id).map((a) => a.name),
    [agents, agent.id],
  )

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
            value={form.draft.name}
            onChange={(e) => form.set("name", e.target.value)}
            {...described(form.errors, "name")}
          />
          <ErrorOf form={form} field="name" />
        </div>

        <TypeFields form={form} />

        <DraftText form={form} field="extraction_instructions" label="Extraction instructions" rows={3} />
        <DerivedPromptField form={form} names={mentionNames} />
        <DraftText form={form} field="examples" label="Examples" rows={2} />
        <DraftText form={form} field="value_if_not_found" label="Value if not found" />
        <DraftText
          form={form}
          field="inconsistency_instructions"
          label="Inconsistency instructions"
          rows={2}
        />
        <DraftText form={form} field="resolution_instructions" label="Resolution instructions" rows={2} />

        <fieldset className="fieldset">
          <legend>Options</legend>
          <DraftCheck
            form={form}
            field="enable_complex_calculations_in_resolution"
            label="Enable complex calculations in resolution"
          />
          <DraftCheck form={form} field="enable_web_search" label="Enable web search" />
          <DraftCheck
            form={form}
            field="is_evaluation"
            label="Evaluation agent (its value is always a number)"
          />
        </fieldset>

        <DimensionsFieldset
          form={form}
          dimensions={dimensions}
          onToggle={toggleDimension}
          onChange={setDimension}
        />

        <ErrorAlert message={error} />
        <div className="form-actions">
          <button type="submit" disabled={busy}>
            Save agent
          </button>
          <button
            type="button"
            className="danger"
            disabled={busy}
            onClick={() =>
              confirm.ask({
                thing: "agent",
                name: saved.name,
                details: <p>Its results are deleted with it. This cannot be undone.</p>,
                action: remove,
              })
            }
          >
            Delete agent
          </button>
          <p role="status" className="saved-note">
            {note}
          </p>
        </div>
      </form>
      {confirm.dialog}
    </section>
  )
}

/** aria-invalid and aria-describedby of a field (its hint, then its error). */
const described = (errors: DraftForm["errors"], key: string, hint?: string) => {
  const ids = [hint, errors[key] ? `${PREFIX}-${key}-error` : undefined].filter(Boolean).join(" ")
  return {
    "aria-invalid": errors[key] ? true : undefined,
    "aria-describedby": ids === "" ? undefined : ids,
  }
}

/** The API's error for one part of the form (`field`: a field, or `dimension:<id>`), if any. */
function ErrorOf({ form, field }: { readonly form: DraftForm; readonly field: string }) {
  return <FieldError id={`${PREFIX}-${field}-error`} message={form.errors[field]} />
}

/** A text field of the draft: one line, or `rows` lines. */
function DraftText({
  form,
  field,
  label,
  rows,
  hint,
}: {
  readonly form: DraftForm
  readonly field: TextField
  readonly label: string
  readonly rows?: number
  readonly hint?: ReactNode
}) {
  const id = `${PREFIX}-${field}`
  const hintId = hint ? `${id}-hint` : undefined
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {rows ? (
        <textarea
          id={id}
          rows={rows}
          value={form.draft[field]}
          onChange={(e) => form.set(field, e.target.value)}
          {...described(form.errors, field, hintId)}
        />
      ) : (
        <input
          id={id}
          value={form.draft[field]}
          onChange={(e) => form.set(field, e.target.value)}
          {...described(form.errors, field, hintId)}
        />
      )}
      {hint && (
        <span id={hintId} className="muted small">
          {hint}
        </span>
      )}
      <ErrorOf form={form} field={field} />
    </div>
  )
}

/** A yes-or-no option of the draft. */
function DraftCheck({
  form,
  field,
  label,
}: {
  readonly form: DraftForm
  readonly field: CheckField
  readonly label: string
}) {
  const id = `${PREFIX}-${field}`
  return (
    <div className="check-field">
      <input
        id={id}
        type="checkbox"
        checked={form.draft[field]}
        onChange={(e) => form.set(field, e.target.checked)}
        {...described(form.errors, field)}
      />
      <label htmlFor={id}>{label}</label>
      <ErrorOf form={form} field={field} />
    </div>
  )
}

/** The agent's type, its type of value (a legacy one kept while the agent has it) and its unit. */
function TypeFields({ form }: { readonly form: DraftForm }) {
  const { draft, errors, set } = form
  const valueTypes = SUPPORTED_VALUE_TYPES.includes(draft.value_type)
    ? SUPPORTED_VALUE_TYPES
    : [...SUPPORTED_VALUE_TYPES, draft.value_type]
  return (
    <div className="field-row">
      <div className="field">
        <label htmlFor={`${PREFIX}-agent_type`}>Agent type</label>
        <select
          id={`${PREFIX}-agent_type`}
          value={draft.agent_type}
          onChange={(e) => set("agent_type", e.target.value === "derived" ? "derived" : "extraction")}
          {...described(errors, "agent_type")}
        >
          <option value="extraction">Extraction: read from the documents</option>
          <option value="derived">Derived: computed from other agents</option>
        </select>
        <ErrorOf form={form} field="agent_type" />
      </div>
      <div className="field">
        <label htmlFor={`${PREFIX}-value_type`}>Type of value</label>
        <select
          id={`${PREFIX}-value_type`}
          value={draft.value_type}
          onChange={(e) => set("value_type", e.target.value as ValueType)}
          {...described(errors, "value_type")}
        >
          {valueTypes.map((t) => (
            <option key={t} value={t}>
              {SUPPORTED_VALUE_TYPES.includes(t) ? t : `${t} (legacy)`}
            </option>
          ))}
        </select>
        <ErrorOf form={form} field="value_type" />
      </div>
      <DraftText form={form} field="unit" label="Unit" />
    </div>
  )
}

/** The derived agent's prompt, where `@` offers the other agents' `names`. */
function DerivedPromptField({
  form,
  names,
}: {
  readonly form: DraftForm
  readonly names: ReadonlyArray<string>
}) {
  return (
    <div className="field">
      <label htmlFor={`${PREFIX}-derived_prompt`}>Derived prompt</label>
      <AgentMentionField
        id={`${PREFIX}-derived_prompt`}
        value={form.draft.derived_prompt}
        onChange={(v) => form.set("derived_prompt", v)}
        names={names}
        rows={3}
        invalid={form.errors.derived_prompt !== undefined}
        describedBy={
          described(form.errors, "derived_prompt", `${PREFIX}-derived_prompt-hint`)["aria-describedby"]
        }
      />
      <span id={`${PREFIX}-derived_prompt-hint`} className="muted small">
        For derived agents: how to compute the value. Type @ to mention another agent.
      </span>
      <ErrorOf form={form} field="derived_prompt" />
    </div>
  )
}

interface DimensionChanges {
  /** Attach (`on`) or detach a dimension. */
  readonly onToggle: (dimension: Dimension, on: boolean) => void
  /** Change how an attached custom dimension's values are given. */
  readonly onChange: (id: string, patch: Partial<DraftDimension>) => void
}

/** The project's dimensions, each one attached to the agent or not. */
function DimensionsFieldset({
  form,
  dimensions,
  ...changes
}: DimensionChanges & {
  readonly form: DraftForm
  readonly dimensions: ReadonlyArray<Dimension> | undefined
}) {
  const projectDimensions = dimensions ?? []
  return (
    <fieldset
      className="fieldset"
      aria-describedby={form.errors.dimensions ? `${PREFIX}-dimensions-error` : undefined}
    >
      <legend>Dimensions</legend>
      <ErrorOf form={form} field="dimensions" />
      {dimensions === undefined ? (
        <p className="muted small">Loading dimensions…</p>
      ) : projectDimensions.length === 0 ? (
        <p className="muted small">This project has no dimensions: create one in the Dimensions section.</p>
      ) : (
        projectDimensions.map((d) => <DimensionChoice key={d.id} form={form} dimension={d} {...changes} />)
      )}
    </fieldset>
  )
}

/**
 * One dimension of the project: whether the agent is split by it and, for an attached custom dimension,
 * whether its values are discovered from the documents or listed.
 */
function DimensionChoice({
  form,
  dimension: d,
  onToggle,
  onChange,
}: DimensionChanges & { readonly form: DraftForm; readonly dimension: Dimension }) {
  const { errors } = form
  const attached = form.draft.dimensions.find((x) => x.dimension_id === d.id)
  const key = `dimension:${d.id}`
  const checkId = `${PREFIX}-dim-${d.id}`
  const valuesId = `${PREFIX}-dim-values-${d.id}`
  const errorId = `${PREFIX}-${key}-error`
  return (
    <div className="dimension-choice" data-dimension-id={d.id}>
      <div className="check-field">
        <input
          id={checkId}
          type="checkbox"
          checked={attached !== undefined}
          onChange={(e) => onToggle(d, e.target.checked)}
          aria-describedby={errors[key] && (!attached || d.source !== "CUSTOM") ? errorId : undefined}
        />
        <label htmlFor={checkId}>Split by {d.name}</label>
        {d.source !== "CUSTOM" && <span className="muted small">(values follow the documents)</span>}
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
              onChange={() => onChange(d.id, { dynamic: true })}
            />
            <label htmlFor={`${checkId}-dynamic`}>Values discovered from documents</label>
          </div>
          <div className="check-field">
            <input
              id={`${checkId}-static`}
              type="radio"
              name={`${checkId}-mode`}
              checked={!attached.dynamic}
              onChange={() => onChange(d.id, { dynamic: false })}
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
                onChange={(e) => onChange(d.id, { values: e.target.value })}
                aria-invalid={errors[key] ? true : undefined}
                aria-describedby={`${valuesId}-hint${errors[key] ? ` ${errorId}` : ""}`}
              />
              <span id={`${valuesId}-hint`} className="muted small">
                Comma-separated
              </span>
            </div>
          )}
          <ErrorOf form={form} field={key} />
        </fieldset>
      )}
      {(!attached || d.source !== "CUSTOM") && <ErrorOf form={form} field={key} />}
    </div>
  )
}
