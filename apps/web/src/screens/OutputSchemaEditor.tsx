/**
 * The editor of a project's output schema: the schema and mapping as JSON texts, the form of fields that
 * follows them (`useSchemaForm`), the texts with their problems (`useSchemaTexts`), and the form element
 * that shows both (`SchemaEditorForm`).
 */
import type { Diagnostic as MappingDiagnostic } from "@dxs/domain/Records"
import { type FormEvent, useCallback, useState } from "react"
import { ErrorAlert } from "../components.tsx"
import { SchemaFieldsForm } from "../SchemaComponents.tsx"
import {
  fieldsToMapping,
  fieldsToSchema,
  mappingIntoFields,
  type SchemaField,
  schemaToFields,
} from "../schemaFields.ts"

export const pretty = (value: unknown): string => JSON.stringify(value, null, 2)

type Parsed =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly message: string }

export const parseJson = (text: string, what: string): Parsed => {
  if (text.trim() === "") return { ok: false, message: `${what} is empty: enter a JSON object.` }
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch (e) {
    return { ok: false, message: `${what} is not valid JSON: ${e instanceof Error ? e.message : String(e)}` }
  }
}

/** The schema as fields (the last schema text that the form can show), and why the form is behind. */
export function useSchemaForm() {
  const [fields, setFields] = useState<ReadonlyArray<SchemaField>>([])
  const [root, setRoot] = useState<Readonly<Record<string, unknown>>>({})
  const [formProblem, setFormProblem] = useState<string | undefined>(undefined)
  const [mappingProblem, setMappingProblem] = useState<string | undefined>(undefined)

  /** The form follows the JSON texts when they parse (and use only what the form edits). */
  const syncForm = useCallback((schemaJson: string, mappingJson: string) => {
    const schema = parseJson(schemaJson, "The schema")
    if (!schema.ok) {
      setFormProblem(`${schema.message} The form shows the last schema that parsed.`)
      return
    }
    const read = schemaToFields(schema.value)
    if (!read.ok) {
      setFormProblem(`${read.reason} Edit this schema as JSON.`)
      return
    }
    setFormProblem(undefined)
    setRoot(read.value.root)
    const mapping =
      mappingJson.trim() === "" ? ({ ok: true, value: null } as const) : parseJson(mappingJson, "The mapping")
    if (!mapping.ok) {
      setFields(read.value.fields)
      setMappingProblem(`${mapping.message} Agents can be chosen here once it parses.`)
      return
    }
    const applied = mappingIntoFields(read.value.fields, mapping.value)
    if (applied.ok) {
      setFields(applied.value)
      setMappingProblem(undefined)
    } else {
      setFields(read.value.fields)
      setMappingProblem(`${applied.reason} Edit this mapping as JSON.`)
    }
  }, [])

  return { fields, setFields, root, formProblem, setFormProblem, mappingProblem, syncForm }
}

/**
 * The schema and mapping texts, whether automatic mapping is on, whether the mapping was cleared, their
 * problems, and whether what is shown was just saved. Every edit keeps the form in step.
 */
export function useSchemaTexts() {
  const form = useSchemaForm()
  const { syncForm } = form
  const [schemaText, setSchemaText] = useState("")
  const [mappingText, setMappingText] = useState("")
  const [autoMap, setAutoMap] = useState(false)
  const [mappingCleared, setMappingCleared] = useState(false)
  const [schemaError, setSchemaError] = useState<string | undefined>(undefined)
  const [mappingError, setMappingError] = useState<string | undefined>(undefined)
  const [saved, setSaved] = useState(false)

  /** Shows texts read from the server (a stored record, or the example of a project without one). */
  const show = useCallback(
    (schemaJson: string, mappingJson: string, auto: boolean) => {
      setSchemaText(schemaJson)
      setMappingText(mappingJson)
      setAutoMap(auto)
      syncForm(schemaJson, mappingJson)
    },
    [syncForm],
  )

  /** The form changed: the JSON texts are written from it (the mapping too, when the form shows it). */
  const changeFields = (next: ReadonlyArray<SchemaField>) => {
    form.setFields(next)
    form.setFormProblem(undefined)
    setSchemaText(pretty(fieldsToSchema(next, form.root)))
    setSchemaError(undefined)
    setSaved(false)
    if (!autoMap && form.mappingProblem === undefined) {
      const mapping = fieldsToMapping(next)
      setMappingText(mapping === null ? "" : pretty(mapping))
      setMappingCleared(mapping === null)
      setMappingError(undefined)
    }
  }

  const editSchema = (text: string) => {
    setSchemaText(text)
    setSchemaError(undefined)
    setSaved(false)
    syncForm(text, mappingText)
  }

  const editMapping = (text: string) => {
    setMappingText(text)
    setMappingError(undefined)
    setSaved(false)
    syncForm(schemaText, text)
  }

  const editAutoMap = (on: boolean) => {
    setAutoMap(on)
    setMappingError(undefined)
    setSaved(false)
  }

  const clearMapping = () => {
    setMappingText("")
    setMappingCleared(true)
    setMappingError(undefined)
    setSaved(false)
    syncForm(schemaText, "")
  }

  return {
    form,
    schemaText,
    mappingText,
    setMappingText,
    autoMap,
    mappingCleared,
    setMappingCleared,
    schemaError,
    setSchemaError,
    mappingError,
    setMappingError,
    saved,
    setSaved,
    show,
    changeFields,
    editSchema,
    editMapping,
    editAutoMap,
    clearMapping,
  }
}

export type SchemaTexts = ReturnType<typeof useSchemaTexts>

/** The fields form beside the schema and mapping texts, automatic mapping, and the save button. */
export function SchemaEditorForm({
  texts,
  onSubmit,
  saving,
  saveError,
  agents,
  dimensions,
  diagnostics,
}: {
  readonly texts: SchemaTexts
  readonly onSubmit: (e: FormEvent<HTMLFormElement>) => void
  readonly saving: boolean
  readonly saveError: string | undefined
  readonly agents: ReadonlyArray<string>
  readonly dimensions: ReadonlyArray<string>
  readonly diagnostics: ReadonlyArray<MappingDiagnostic>
}) {
  const { form, schemaText, schemaError, autoMap, saved } = texts
  return (
    <form className="card schema-form schema-editor" onSubmit={onSubmit} noValidate>
      <section aria-labelledby="fields-heading" className="schema-form-fields">
        <h2 id="fields-heading">Fields</h2>
        <p className="muted small hint">
          The form and the JSON beside it are the same schema: a change to one shows in the other.
        </p>
        {form.formProblem && (
          <p className="alert field-error" data-testid="form-problem">
            {form.formProblem}
          </p>
        )}
        <SchemaFieldsForm
          fields={form.fields}
          onChange={texts.changeFields}
          disabled={form.formProblem !== undefined}
          agents={agents}
          dimensions={dimensions}
          diagnostics={diagnostics}
          mappingLocked={
            autoMap
              ? "Agents are mapped automatically: turn automatic mapping off to choose them here."
              : form.mappingProblem
          }
        />
      </section>
      <div className="stack schema-form-json">
        <div className="field">
          <label htmlFor="schema-text">Schema (JSON Schema)</label>
          <textarea
            id="schema-text"
            name="schema"
            className="code-input"
            rows={16}
            spellCheck={false}
            autoCapitalize="off"
            autoCorrect="off"
            value={schemaText}
            aria-invalid={schemaError ? true : undefined}
            aria-describedby={schemaError ? "schema-text-error" : undefined}
            onChange={(e) => texts.editSchema(e.target.value)}
          />
          {schemaError && (
            <p role="alert" className="alert field-error" id="schema-text-error">
              {schemaError}
            </p>
          )}
        </div>

        <div className="checkbox-field">
          <input
            id="auto-map"
            type="checkbox"
            name="auto_map"
            checked={autoMap}
            aria-describedby="auto-map-hint"
            onChange={(e) => texts.editAutoMap(e.target.checked)}
          />
          <div>
            <label htmlFor="auto-map">Generate agents and mapping automatically</label>
            <p id="auto-map-hint" className="muted small hint">
              On save, the agents (and dimensions) the schema needs are created and the mapping is generated
              in the background; a mapping written below is not sent.
            </p>
          </div>
        </div>

        <MappingField texts={texts} />

        <div className="form-actions">
          <button type="submit" disabled={saving}>
            Save schema
          </button>
          {saved && (
            <p role="status" className="saved-note">
              Saved.
            </p>
          )}
        </div>
        <ErrorAlert message={saveError} />
      </div>
    </form>
  )
}

function MappingField({ texts }: { readonly texts: SchemaTexts }) {
  const { mappingText, mappingError, autoMap, mappingCleared } = texts
  const showClearedNote = mappingCleared && mappingText.trim() === "" && !autoMap
  return (
    <div className="field">
      <label htmlFor="mapping-text">Mapping (JSON)</label>
      <textarea
        id="mapping-text"
        name="mapping"
        className="code-input"
        rows={12}
        spellCheck={false}
        autoCapitalize="off"
        autoCorrect="off"
        readOnly={autoMap}
        value={mappingText}
        aria-invalid={mappingError ? true : undefined}
        aria-describedby={mappingError ? "mapping-text-hint mapping-text-error" : "mapping-text-hint"}
        onChange={(e) => texts.editMapping(e.target.value)}
      />
      <p id="mapping-text-hint" className="muted small hint">
        {autoMap
          ? "Generated automatically: read-only while automatic mapping is on."
          : "Nodes of kind object, scalar_from_agent, array_from_dimension, object_from_dimension and dimension_value. Left empty, a changed schema keeps the saved mapping."}
      </p>
      {mappingError && (
        <p role="alert" className="alert field-error" id="mapping-text-error">
          {mappingError}
        </p>
      )}
      <div className="field-actions">
        <button
          type="button"
          className="secondary small-button"
          disabled={autoMap}
          onClick={texts.clearMapping}
        >
          Clear mapping
        </button>
        {showClearedNote && (
          <span className="muted small" data-testid="mapping-cleared-note">
            The mapping is removed when you save.
          </span>
        )}
      </div>
    </div>
  )
}
