import type {
  Agent,
  Dimension,
  Diagnostic as MappingDiagnostic,
  OutputSchemaRecord,
  Project,
} from "@dxs/domain/Records"
import { useQuery } from "@tanstack/react-query"
import { type FormEvent, type ReactNode, useCallback, useEffect, useMemo, useRef, useState } from "react"
import { api, errorMessage, isApiError, seg } from "../api.ts"
import { ErrorAlert, formatDate, Loading, ProjectBreadcrumb } from "../components.tsx"
import { useApiQuery } from "../query.ts"
import { Link, useTitle } from "../router.tsx"
import { DiagnosticsTable, JsonWithLinks } from "../SchemaComponents.tsx"
import {
  parseJson,
  pretty,
  SchemaEditorForm,
  type SchemaTexts,
  useSchemaTexts,
} from "./OutputSchemaEditor.tsx"

const POLL_MS = 1000
const EXAMPLE_SCHEMA = { type: "object", properties: {} }

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
 * What a save sends: the schema, and the mapping (`undefined`: omitted, which keeps the stored one, for a
 * new or changed schema); or why the texts cannot be sent.
 */
const saveRequest = (texts: SchemaTexts, record: OutputSchemaRecord | null | undefined) => {
  const { schemaText, mappingText, autoMap, mappingCleared } = texts
  const schema = parseJson(schemaText, "The schema")
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
  return { schema, mapping, mappingProblem }
}

/**
 * While the mapping is generated, the record is read again every second; each answer carries the epoch its
 * request started in, and only one of the current epoch reaches `apply`.
 */
function useGenerationPoll(
  base: string,
  generating: boolean,
  epoch: { readonly current: number },
  apply: (r: OutputSchemaRecord) => void,
) {
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
  const applyPolled = useRef(apply)
  applyPolled.current = apply
  useEffect(() => {
    if (poll.data && poll.data.started === epoch.current) applyPolled.current(poll.data.record)
  }, [poll.data, epoch])
  return poll.error && poll.isError ? errorMessage(poll.error) : undefined
}

/**
 * The stored record of the project's output schema (undefined: not loaded yet; null: the project has none
 * yet), read when the screen opens and shown in the editor through `show`.
 */
function useSchemaRecord(base: string, show: SchemaTexts["show"]) {
  const [record, setRecord] = useState<OutputSchemaRecord | null | undefined>(undefined)
  const [loadError, setLoadError] = useState<string | undefined>(undefined)

  const showRecord = useCallback(
    (r: OutputSchemaRecord) => {
      setRecord(r)
      const mappingJson = r.mapping === null || r.mapping === undefined ? "" : pretty(r.mapping)
      show(pretty(r.schema), mappingJson, r.auto_map)
    },
    [show],
  )

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
        show(pretty(EXAMPLE_SCHEMA), "", false)
      } else setLoadError(errorMessage(e))
    }
  }, [base, showRecord, show])

  useEffect(() => {
    void load()
    return () => {
      epoch.current += 1
    }
  }, [load])

  return { record, setRecord, loadError, setLoadError, showRecord, epoch, load }
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

  const [saveError, setSaveError] = useState<string | undefined>(undefined)
  const [refused, setRefused] = useState<ReadonlyArray<MappingDiagnostic> | undefined>(undefined)
  const [saving, setSaving] = useState(false)
  const texts = useSchemaTexts()
  const { syncForm } = texts.form
  const { record, setRecord, loadError, setLoadError, showRecord, epoch, load } = useSchemaRecord(
    base,
    texts.show,
  )

  const generating = record?.auto_map === true && record.status === "pending"
  const pollError = useGenerationPoll(base, generating, epoch, (r) => {
    setRecord(r)
    setLoadError(undefined)
    // the mapping field is read-only while generating: show what was generated
    if (r.auto_map && texts.autoMap) {
      const mappingJson = r.mapping === null ? "" : pretty(r.mapping)
      texts.setMappingText(mappingJson)
      if (r.status !== "pending") syncForm(texts.schemaText, mappingJson)
    }
  })

  const save = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    texts.setSaved(false)
    setSaveError(undefined)
    setRefused(undefined)
    const { schema, mapping, mappingProblem } = saveRequest(texts, record)
    texts.setSchemaError(schema.ok ? undefined : schema.message)
    texts.setMappingError(mappingProblem)
    if (!schema.ok || mappingProblem !== undefined) return

    setSaving(true)
    epoch.current += 1
    try {
      const answer = await api.put<OutputSchemaRecord>(`${base}/schema/`, {
        schema: schema.value,
        auto_map: texts.autoMap,
        ...(mapping === undefined ? {} : { mapping: mapping.value }),
      })
      showRecord(answer)
      texts.setMappingCleared(false)
      texts.setSaved(true)
    } catch (err) {
      setSaveError(errorMessage(err))
      const diagnostics = refusalDiagnostics(err)
      setRefused(diagnostics.length > 0 ? diagnostics : undefined)
    } finally {
      setSaving(false)
    }
  }

  const agentNames = useMemo(() => (agents.data ?? []).map((a) => a.name), [agents.data])
  const dimensionNames = useMemo(() => (dimensions.data ?? []).map((d) => d.name), [dimensions.data])

  const breadcrumb = <ProjectBreadcrumb href={base} name={project.data?.name} current="Output schema" />

  if (project.error && project.data === undefined)
    return <ProjectNotFound breadcrumb={breadcrumb} error={project.error} />

  const diagnostics = refused ?? record?.diagnostics ?? []

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
          <SchemaEditorForm
            texts={texts}
            onSubmit={save}
            saving={saving}
            saveError={saveError}
            agents={agentNames}
            dimensions={dimensionNames}
            diagnostics={diagnostics}
          />

          {generating && (
            <p role="status" className="run-status generating">
              Generating mapping…
            </p>
          )}

          {record && <MappingStatus record={record} />}

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

function ProjectNotFound({ breadcrumb, error }: { readonly breadcrumb: ReactNode; readonly error: string }) {
  return (
    <>
      {breadcrumb}
      <h1>Project not found</h1>
      <ErrorAlert message={error} />
      <p>
        <Link href="/">Back to the projects</Link>
      </p>
    </>
  )
}

function MappingStatus({ record }: { readonly record: OutputSchemaRecord }) {
  return (
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
