import type {
  Agent,
  Dimension,
  Diagnostic as MappingDiagnostic,
  OutputSchemaRecord,
  Project,
} from "@dxs/domain/Records"
import { useQuery } from "@tanstack/react-query"
import { type FormEvent, useCallback, useEffect, useMemo, useRef, useState } from "react"
import { api, errorMessage, isApiError, seg } from "../api.ts"
import { ErrorAlert, formatDate, Loading } from "../components.tsx"
import { useApiQuery } from "../query.ts"
import { Link, useTitle } from "../router.tsx"
import { DiagnosticsTable, JsonWithLinks, SchemaFieldsForm } from "../SchemaComponents.tsx"
import {
  fieldsToMapping,
  fieldsToSchema,
  mappingIntoFields,
  type SchemaField,
  schemaToFields,
} from "../schemaFields.ts"

const POLL_MS = 1000
const EXAMPLE_SCHEMA = { type: "object", properties: {} }

const pretty = (value: unknown): string => JSON.stringify(value, null, 2)

/** JSON text with the keys of every object sorted: equal for equal documents. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_k, x) =>
    x !== null && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(
          Object.keys(x)
            .sort()
            .map((k) => [k, (x as Record<string, unknown>)[k]]),
        )
      : x,
  )

type Parsed =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly message: string }

const parseJson = (text: string, what: string): Parsed => {
  if (text.trim() === "") return { ok: false, message: `${what} is empty: enter a JSON object.` }
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch (e) {
    return { ok: false, message: `${what} is not valid JSON: ${e instanceof Error ? e.message : String(e)}` }
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

/** The diagnostics of a refused save: a 422's `diagnostics`, or a 400's field `errors`. */
const refusalDiagnostics = (e: unknown): ReadonlyArray<MappingDiagnostic> => {
  if (!isApiError(e)) return []
  const { diagnostics } = e.body
  if (Array.isArray(diagnostics) && diagnostics.length > 0)
    return diagnostics.filter(isRecord).map((d) => ({
      path: String(d.path ?? ""),
      severity: d.severity === "warning" ? "warning" : "error",
      code: String(d.code ?? ""),
      message: String(d.message ?? ""),
    }))
  return e.errors.map((f) => ({ path: f.path, severity: "error", code: "", message: f.message }))
}

/**
 * `/projects/:id/schema`: the project's target JSON Schema and its mapping (written by hand, or generated
 * with the agents), the mapping's status and diagnostics, and a preview of the results in the schema's shape.
 */
export function OutputSchemaScreen({ projectId }: { readonly projectId: string }) {
  const base = `/projects/${seg(projectId)}`
  const project = useApiQuery<Project>(`${base}/`)
  // The Document dimension's values (every document's name) are not needed here: a page of agents, not of documents.
  const agents = useApiQuery<ReadonlyArray<Agent>>(`${base}/agents/?dimension_values=custom`)
  const dimensions = useApiQuery<ReadonlyArray<Dimension>>(`${base}/dimensions/`)
  useTitle(project.data ? `Output schema · ${project.data.name}` : "Output schema")

  // undefined: not loaded yet; null: the project has no schema yet
  const [record, setRecord] = useState<OutputSchemaRecord | null | undefined>(undefined)
  const [loadError, setLoadError] = useState<string | undefined>(undefined)
  const [schemaText, setSchemaText] = useState("")
  const [mappingText, setMappingText] = useState("")
  const [autoMap, setAutoMap] = useState(false)
  const [mappingCleared, setMappingCleared] = useState(false)
  const [schemaError, setSchemaError] = useState<string | undefined>(undefined)
  const [mappingError, setMappingError] = useState<string | undefined>(undefined)
  const [saveError, setSaveError] = useState<string | undefined>(undefined)
  const [refused, setRefused] = useState<ReadonlyArray<MappingDiagnostic> | undefined>(undefined)
  const [saving, setSaving] = useState(false)
  const [saved, setSaved] = useState(false)
  // the schema as fields (the last schema text that the form can show), and why the form is behind
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

  const showRecord = useCallback(
    (r: OutputSchemaRecord) => {
      setRecord(r)
      const schemaJson = pretty(r.schema)
      const mappingJson = r.mapping === null || r.mapping === undefined ? "" : pretty(r.mapping)
      setSchemaText(schemaJson)
      setMappingText(mappingJson)
      setAutoMap(r.auto_map)
      syncForm(schemaJson, mappingJson)
    },
    [syncForm],
  )

  /** The form changed: the JSON texts are written from it (the mapping too, when the form shows it). */
  const changeFields = (next: ReadonlyArray<SchemaField>) => {
    setFields(next)
    setFormProblem(undefined)
    setSchemaText(pretty(fieldsToSchema(next, root)))
    setSchemaError(undefined)
    setSaved(false)
    if (!autoMap && mappingProblem === undefined) {
      const mapping = fieldsToMapping(next)
      setMappingText(mapping === null ? "" : pretty(mapping))
      setMappingCleared(mapping === null)
      setMappingError(undefined)
    }
  }

  // bumped by every load, save and unmount: the answer of a load or poll started before it is dropped, so
  // it cannot overwrite what the member typed or saved since
  const epoch = useRef(0)
  const load = useCallback(async () => {
    const started = ++epoch.current
    setLoadError(undefined)
    try {
      const r = await api.get<OutputSchemaRecord>(`${base}/schema/`)
      if (started === epoch.current) showRecord(r)
    } catch (e) {
      if (started !== epoch.current) return
      if (isApiError(e) && e.status === 404) {
        setRecord(null)
        setSchemaText(pretty(EXAMPLE_SCHEMA))
        setMappingText("")
        setAutoMap(false)
        syncForm(pretty(EXAMPLE_SCHEMA), "")
      } else setLoadError(errorMessage(e))
    }
  }, [base, showRecord, syncForm])

  useEffect(() => {
    void load()
    return () => {
      epoch.current += 1
    }
  }, [load])

  const generating = record?.auto_map === true && record.status === "pending"

  // while the mapping is generated, the record is read again every second; each answer carries the epoch
  // its request started in
  const poll = useQuery({
    queryKey: ["api", `${base}/schema/`, "generating"] as const,
    queryFn: async ({ signal }) => {
      const started = epoch.current
      return { started, record: await api.get<OutputSchemaRecord>(`${base}/schema/`, { signal }) }
    },
    enabled: generating,
    refetchInterval: POLL_MS,
    staleTime: 0,
    gcTime: 0,
    retry: false,
  })
  const applyPolled = useRef<(r: OutputSchemaRecord) => void>(() => undefined)
  applyPolled.current = (r) => {
    setRecord(r)
    setLoadError(undefined)
    // the mapping field is read-only while generating: show what was generated
    if (r.auto_map && autoMap) {
      const mappingJson = r.mapping === null ? "" : pretty(r.mapping)
      setMappingText(mappingJson)
      if (r.status !== "pending") syncForm(schemaText, mappingJson)
    }
  }
  useEffect(() => {
    if (poll.data && poll.data.started === epoch.current) applyPolled.current(poll.data.record)
  }, [poll.data])
  const pollError = poll.error && poll.isError ? errorMessage(poll.error) : undefined

  const save = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setSaved(false)
    setSaveError(undefined)
    setRefused(undefined)
    const schema = parseJson(schemaText, "The schema")
    // undefined: omit `mapping` (keep the stored one, for a new or changed schema)
    let mapping: { readonly value: unknown } | undefined
    let mappingProblem: string | undefined
    if (!autoMap) {
      if (mappingText.trim() === "") {
        const changed = !record || !schema.ok || canonical(schema.value) !== canonical(record.schema)
        if (mappingCleared || !changed) mapping = { value: null }
      } else {
        const parsed = parseJson(mappingText, "The mapping")
        if (parsed.ok) mapping = { value: parsed.value }
        else mappingProblem = parsed.message
      }
    }
    setSchemaError(schema.ok ? undefined : schema.message)
    setMappingError(mappingProblem)
    if (!schema.ok || mappingProblem !== undefined) return

    setSaving(true)
    epoch.current += 1
    try {
      const answer = await api.put<OutputSchemaRecord>(`${base}/schema/`, {
        schema: schema.value,
        auto_map: autoMap,
        ...(mapping === undefined ? {} : { mapping: mapping.value }),
      })
      showRecord(answer)
      setMappingCleared(false)
      setSaved(true)
    } catch (err) {
      setSaveError(errorMessage(err))
      const diagnostics = refusalDiagnostics(err)
      setRefused(diagnostics.length > 0 ? diagnostics : undefined)
    } finally {
      setSaving(false)
    }
  }

  const clearMapping = () => {
    setMappingText("")
    setMappingCleared(true)
    setMappingError(undefined)
    setSaved(false)
    syncForm(schemaText, "")
  }

  const agentNames = useMemo(() => (agents.data ?? []).map((a) => a.name), [agents.data])
  const dimensionNames = useMemo(() => (dimensions.data ?? []).map((d) => d.name), [dimensions.data])

  const breadcrumb = (
    <nav aria-label="Breadcrumb" className="breadcrumb">
      <ol>
        <li>
          <Link href="/">Projects</Link>
        </li>
        <li>
          <Link href={base}>{project.data?.name ?? "Project"}</Link>
        </li>
        <li aria-current="page">Output schema</li>
      </ol>
    </nav>
  )

  if (project.error && project.data === undefined)
    return (
      <>
        {breadcrumb}
        <h1>Project not found</h1>
        <ErrorAlert message={project.error} />
        <p>
          <Link href="/">Back to the projects</Link>
        </p>
      </>
    )

  const diagnostics = refused ?? record?.diagnostics ?? []
  const showClearedNote = mappingCleared && mappingText.trim() === "" && !autoMap

  return (
    <>
      {breadcrumb}
      <h1>Output schema</h1>
      <p className="lead">
        The JSON Schema the results of{" "}
        <strong data-testid="project-name">{project.data?.name ?? "this project"}</strong> are delivered in,
        and the mapping of its agents and dimensions to the schema's fields.
      </p>
      <ErrorAlert message={loadError ?? (generating ? pollError : undefined)} />

      {record === undefined ? (
        loadError ? (
          <button type="button" onClick={() => void load()}>
            Try again
          </button>
        ) : (
          <Loading what="the output schema" />
        )
      ) : (
        <>
          {record === null && (
            <p className="muted">No output schema yet: edit the example below and save it.</p>
          )}
          <form className="card schema-form schema-editor" onSubmit={save} noValidate>
            <section aria-labelledby="fields-heading" className="schema-form-fields">
              <h2 id="fields-heading">Fields</h2>
              <p className="muted small hint">
                The form and the JSON beside it are the same schema: a change to one shows in the other.
              </p>
              {formProblem && (
                <p className="alert field-error" data-testid="form-problem">
                  {formProblem}
                </p>
              )}
              <SchemaFieldsForm
                fields={fields}
                onChange={changeFields}
                disabled={formProblem !== undefined}
                agents={agentNames}
                dimensions={dimensionNames}
                diagnostics={refused ?? record?.diagnostics ?? []}
                mappingLocked={
                  autoMap
                    ? "Agents are mapped automatically: turn automatic mapping off to choose them here."
                    : mappingProblem
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
                  onChange={(e) => {
                    setSchemaText(e.target.value)
                    setSchemaError(undefined)
                    setSaved(false)
                    syncForm(e.target.value, mappingText)
                  }}
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
                  onChange={(e) => {
                    setAutoMap(e.target.checked)
                    setMappingError(undefined)
                    setSaved(false)
                  }}
                />
                <div>
                  <label htmlFor="auto-map">Generate agents and mapping automatically</label>
                  <p id="auto-map-hint" className="muted small hint">
                    On save, the agents (and dimensions) the schema needs are created and the mapping is
                    generated in the background; a mapping written below is not sent.
                  </p>
                </div>
              </div>

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
                  aria-describedby={
                    mappingError ? "mapping-text-hint mapping-text-error" : "mapping-text-hint"
                  }
                  onChange={(e) => {
                    setMappingText(e.target.value)
                    setMappingError(undefined)
                    setSaved(false)
                    syncForm(schemaText, e.target.value)
                  }}
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
                    onClick={clearMapping}
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

          {generating && (
            <p role="status" className="run-status generating">
              Generating mapping…
            </p>
          )}

          {record && (
            <section aria-labelledby="mapping-status-heading" className="section">
              <h2 id="mapping-status-heading">Mapping status</h2>
              <dl className="facts" data-testid="schema-record">
                <dt>Status</dt>
                <dd data-testid="mapping-status">{record.status}</dd>
                <dt>Source</dt>
                <dd data-testid="mapping-source">{record.source}</dd>
                <dt>Error</dt>
                <dd data-testid="mapping-error">{record.error ?? "—"}</dd>
                <dt>Generated</dt>
                <dd>{formatDate(record.generated_at, "Not yet")}</dd>
                <dt>Schema in sync</dt>
                <dd data-testid="schema-in-sync">{record.schema_in_sync ? "Yes" : "No"}</dd>
              </dl>
            </section>
          )}

          <section aria-labelledby="diagnostics-heading" className="section">
            <h2 id="diagnostics-heading">Diagnostics</h2>
            {refused && <p className="muted small">The diagnostics of the refused save:</p>}
            <DiagnosticsTable diagnostics={diagnostics} />
          </section>

          <PreviewSection base={base} />
        </>
      )}
      <p>
        <Link href={base}>Back to project</Link>
      </p>
    </>
  )
}

/** The results in the schema's shape, enriched with consistency and deep links. */
function PreviewSection({ base }: { readonly base: string }) {
  const [preview, setPreview] = useState<{ readonly value: unknown } | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [busy, setBusy] = useState(false)

  const load = async () => {
    setBusy(true)
    setError(undefined)
    try {
      const value = await api.get<unknown>(`${base}/results/schema/?enrich=true`)
      setPreview({ value })
    } catch (e) {
      setPreview(undefined)
      setError(errorMessage(e))
    } finally {
      setBusy(false)
    }
  }

  return (
    <section aria-labelledby="preview-heading" className="section">
      <h2 id="preview-heading">Preview</h2>
      <p className="muted small">
        The current results in the schema's shape, with each field's consistency and a link to its result.
      </p>
      <button type="button" className="secondary" disabled={busy} onClick={() => void load()}>
        Preview results
      </button>
      <ErrorAlert message={error} />
      {preview && (
        <pre data-testid="schema-preview" className="json-preview">
          <JsonWithLinks value={preview.value} />
        </pre>
      )}
    </section>
  )
}
