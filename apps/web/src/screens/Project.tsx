import { type DragEvent, type FormEvent, useCallback, useEffect, useMemo, useRef, useState } from "react"
import { api, errorMessage, seg, uploadFile } from "../api.ts"
import { ErrorAlert, formatValue, Loading, pluralize, statusClass, VisuallyHidden } from "../components.tsx"
import { type Resource, usePolling, useResource } from "../hooks.ts"
import { Link, useTitle } from "../router.tsx"
import type {
  Agent,
  AgentRecord,
  AgentsStatus,
  Dimension,
  DocumentRecord,
  Project,
  ResolutionStatus,
  ResultRow,
  ResultsPage,
} from "../types.ts"
import { AgentEditor } from "./AgentEditor.tsx"
import { DimensionsSection } from "./DimensionsSection.tsx"

const DOCUMENTS_POLL_MS = 2000
const STATUS_POLL_MS = 1000
const RESULTS_LIMIT = 500

/**
 * `/projects/:id`: documents (upload, parsing state, e-mail attachments under their message), dimensions,
 * agents (create, edit, launch, progress) and the results matrix.
 */
export function ProjectScreen({ projectId }: { readonly projectId: string }) {
  const base = `/projects/${seg(projectId)}`
  const project = useResource<Project>(`${base}/`)
  const documents = useResource<ReadonlyArray<DocumentRecord>>(`${base}/documents/`)
  const agents = useResource<ReadonlyArray<AgentRecord>>(`${base}/agents/`)
  const dimensions = useResource<ReadonlyArray<Dimension>>(`${base}/dimensions/`)
  const results = useResource<ResultsPage>(`${base}/results/?limit=${RESULTS_LIMIT}`)
  useTitle(project.data?.name ?? "Project")

  if (project.data === undefined)
    return project.error ? (
      <>
        <h1>Project not found</h1>
        <ErrorAlert message={project.error} />
        <p>
          <Link href="/">Back to the projects</Link>
        </p>
      </>
    ) : (
      <Loading what="the project" />
    )

  return (
    <>
      <div className="heading-row">
        <h1>{project.data.name}</h1>
        <Link href={`${base}/schema`} className="heading-link">
          Output schema
        </Link>
      </div>
      {project.data.description && <p className="lead">{project.data.description}</p>}
      <DocumentsSection base={base} documents={documents} />
      <DimensionsSection base={base} dimensions={dimensions} />
      <AgentsSection
        base={base}
        agents={agents}
        dimensions={dimensions.data}
        onRunEnded={() => {
          void results.reload()
          void agents.reload()
          void documents.reload()
        }}
        onAgentsChanged={() => void results.reload()}
      />
      <ResultsSection projectId={projectId} agents={agents.data} results={results} />
    </>
  )
}

// ---------------------------------------------------------------------------------------------------------
// Documents

interface Upload {
  readonly key: number
  readonly name: string
  readonly fraction: number
  readonly state: "waiting" | "uploading" | "done" | "failed"
  readonly error?: string
}

function DocumentsSection({
  base,
  documents,
}: {
  readonly base: string
  readonly documents: Resource<ReadonlyArray<DocumentRecord>>
}) {
  const [uploads, setUploads] = useState<ReadonlyArray<Upload>>([])
  const [dragging, setDragging] = useState(false)
  const queue = useRef<Promise<void>>(Promise.resolve())
  const nextKey = useRef(0)
  const input = useRef<HTMLInputElement>(null)

  const anyPending = documents.data?.some((d) => d.status === "Pending") ?? false
  usePolling(anyPending, DOCUMENTS_POLL_MS, documents.reload)

  const update = useCallback((key: number, patch: Partial<Upload>) => {
    setUploads((all) => all.map((u) => (u.key === key ? { ...u, ...patch } : u)))
  }, [])

  const addFiles = (files: FileList | ReadonlyArray<File>) => {
    const list = Array.from(files)
    if (list.length === 0) return
    const entries = list.map((file) => ({ file, key: nextKey.current++ }))
    setUploads((all) => [
      ...all,
      ...entries.map(({ file, key }): Upload => ({ key, name: file.name, fraction: 0, state: "waiting" })),
    ])
    for (const { file, key } of entries) {
      queue.current = queue.current.then(async () => {
        update(key, { state: "uploading" })
        try {
          await uploadFile<DocumentRecord>(`${base}/documents/`, file, (fraction) =>
            update(key, { fraction }),
          )
          update(key, { state: "done", fraction: 1 })
          await documents.reload()
        } catch (e) {
          update(key, { state: "failed", error: errorMessage(e) })
        }
      })
    }
  }

  const onDrop = (e: DragEvent<HTMLDivElement>) => {
    e.preventDefault()
    setDragging(false)
    if (e.dataTransfer.files.length > 0) addFiles(e.dataTransfer.files)
  }

  const finished = uploads.some((u) => u.state === "done" || u.state === "failed")

  return (
    <section aria-labelledby="documents-heading" className="section">
      <h2 id="documents-heading">Documents</h2>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: a drop target for dragged files; the file input inside is the keyboard and screen reader way */}
      <div
        className={`drop-zone${dragging ? " dragging" : ""}`}
        data-testid="drop-zone"
        onDragEnter={(e) => {
          e.preventDefault()
          setDragging(true)
        }}
        onDragOver={(e) => {
          e.preventDefault()
          e.dataTransfer.dropEffect = "copy"
          if (!dragging) setDragging(true)
        }}
        onDragLeave={(e) => {
          if (e.currentTarget.contains(e.relatedTarget as Node | null)) return
          setDragging(false)
        }}
        onDrop={onDrop}
      >
        <UploadIcon />
        <div className="field">
          <label htmlFor="upload-documents">Upload documents</label>
          <input
            ref={input}
            id="upload-documents"
            type="file"
            multiple
            onChange={(e) => {
              if (e.target.files) addFiles(e.target.files)
              if (input.current) input.current.value = ""
            }}
          />
        </div>
        <p className="muted small">or drop files here (PDF, images, Office files, e-mails, text…)</p>
      </div>

      {uploads.length > 0 && (
        <div className="uploads">
          <h3 className="visually-hidden">Uploads</h3>
          <ul className="upload-list">
            {uploads.map((u) => (
              <li key={u.key} className={`upload upload-${u.state}`} data-testid="upload">
                <span className="upload-name">{u.name}</span>
                {u.state === "waiting" && <span className="muted">Waiting…</span>}
                {u.state === "uploading" && (
                  <>
                    <progress
                      max={100}
                      value={Math.round(u.fraction * 100)}
                      aria-label={`Upload of ${u.name}`}
                    />
                    <span>Uploading… {Math.round(u.fraction * 100)}%</span>
                  </>
                )}
                {u.state === "done" && <span className="ok">Uploaded</span>}
                {u.state === "failed" && (
                  <span role="alert" className="alert inline">
                    {u.error}
                  </span>
                )}
              </li>
            ))}
          </ul>
          {finished && (
            <button
              type="button"
              className="link-button"
              onClick={() =>
                setUploads((all) => all.filter((u) => u.state === "waiting" || u.state === "uploading"))
              }
            >
              Clear finished uploads
            </button>
          )}
        </div>
      )}

      <ErrorAlert message={documents.error} />
      {documents.data === undefined ? (
        documents.error ? null : (
          <Loading what="documents" />
        )
      ) : documents.data.length === 0 ? (
        <p className="muted">No documents yet.</p>
      ) : (
        <>
          <p className="muted small">{documentSummary(documents.data)}</p>
          <div className="table-wrap">
            <table className="data-table" data-testid="documents-table">
              <caption className="visually-hidden">Documents</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="num">
                    Pages
                  </th>
                </tr>
              </thead>
              <tbody>
                {withAttachments(documents.data).map(({ document: d, parent }) => (
                  <tr
                    key={d.id}
                    data-document-id={d.id}
                    data-status={d.status}
                    data-parent-document-id={parent?.id}
                    className={parent ? "attachment-row" : undefined}
                  >
                    <td>
                      {parent ? (
                        <span className="attachment-name">
                          <span aria-hidden="true" className="attachment-mark">
                            ↳
                          </span>
                          <VisuallyHidden>Attachment of {parent.file_name}: </VisuallyHidden>
                          {d.file_name}
                        </span>
                      ) : (
                        d.file_name
                      )}
                    </td>
                    <td>{d.type}</td>
                    <td>
                      <span className={`doc-status doc-${d.status.toLowerCase()}`}>{d.status}</span>
                      {d.status === "Failed" && d.failure_reason && (
                        <span className="failure-reason">{d.failure_reason}</span>
                      )}
                    </td>
                    <td className="num">{d.status === "Processed" ? d.page_count : "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  )
}

/**
 * The documents in list order, each e-mail followed by its attachments (documents whose
 * `parent_document_id` names it); an attachment whose e-mail is not listed stands on its own.
 */
const withAttachments = (
  docs: ReadonlyArray<DocumentRecord>,
): ReadonlyArray<{ readonly document: DocumentRecord; readonly parent: DocumentRecord | undefined }> => {
  const byId = new Map(docs.map((d) => [d.id, d]))
  const children = new Map<string, Array<DocumentRecord>>()
  for (const d of docs)
    if (d.parent_document_id !== null && d.parent_document_id !== d.id && byId.has(d.parent_document_id)) {
      const list = children.get(d.parent_document_id) ?? []
      list.push(d)
      children.set(d.parent_document_id, list)
    }
  const out: Array<{ document: DocumentRecord; parent: DocumentRecord | undefined }> = []
  const placed = new Set<string>()
  const place = (d: DocumentRecord, parent: DocumentRecord | undefined) => {
    if (placed.has(d.id)) return
    placed.add(d.id)
    out.push({ document: d, parent })
    for (const c of children.get(d.id) ?? []) place(c, d)
  }
  for (const d of docs)
    if (d.parent_document_id === null || !byId.has(d.parent_document_id) || d.parent_document_id === d.id)
      place(d, undefined)
  // attachments caught in a cycle of parents (not expected): listed at the end
  for (const d of docs) place(d, byId.get(d.parent_document_id ?? ""))
  return out
}

const documentSummary = (docs: ReadonlyArray<DocumentRecord>): string => {
  const count = (s: DocumentRecord["status"]) => docs.filter((d) => d.status === s).length
  return `${pluralize(docs.length, "document")}: ${count("Processed")} processed, ${count("Pending")} pending, ${count("Failed")} failed`
}

function UploadIcon() {
  return (
    <svg
      className="icon"
      width="28"
      height="28"
      viewBox="0 0 24 24"
      aria-hidden="true"
      focusable="false"
      fill="none"
      stroke="currentColor"
      strokeWidth="1.8"
      strokeLinecap="round"
      strokeLinejoin="round"
    >
      <path d="M12 16V4M7 9l5-5 5 5M4 16v3a1 1 0 0 0 1 1h14a1 1 0 0 0 1-1v-3" />
    </svg>
  )
}

// ---------------------------------------------------------------------------------------------------------
// Agents and the pipeline run

type RunPhase = "idle" | "launching" | "running" | "done"

function AgentsSection({
  base,
  agents,
  dimensions,
  onRunEnded,
  onAgentsChanged,
}: {
  readonly base: string
  readonly agents: Resource<ReadonlyArray<AgentRecord>>
  readonly dimensions: ReadonlyArray<Dimension> | undefined
  readonly onRunEnded: () => void
  /** An agent was created, changed or deleted: its results may have changed. */
  readonly onAgentsChanged: () => void
}) {
  const [name, setName] = useState("")
  const [instructions, setInstructions] = useState("")
  const [valueType, setValueType] = useState<"string" | "number">("string")
  const [createError, setCreateError] = useState<string | undefined>(undefined)
  const [creating, setCreating] = useState(false)
  const [editingId, setEditingId] = useState<string | null>(null)
  const editButtons = useRef(new Map<string, HTMLButtonElement>())

  const [phase, setPhase] = useState<RunPhase>("idle")
  const [status, setStatus] = useState<AgentsStatus | undefined>(undefined)
  const [runError, setRunError] = useState<string | undefined>(undefined)
  const ended = useRef(onRunEnded)
  ended.current = onRunEnded

  // a run may already be going when the page opens
  useEffect(() => {
    let cancelled = false
    api
      .get<AgentsStatus>(`${base}/agents/status/`)
      .then((s) => {
        if (cancelled) return
        setStatus(s)
        if (s.pipeline_running) setPhase((p) => (p === "idle" ? "running" : p))
      })
      .catch(() => {
        // progress is shown once a run is launched
      })
    return () => {
      cancelled = true
    }
  }, [base])

  usePolling(phase === "running", STATUS_POLL_MS, async () => {
    try {
      const s = await api.get<AgentsStatus>(`${base}/agents/status/`)
      setStatus(s)
      setRunError(undefined)
      if (!s.pipeline_running) {
        setPhase("done")
        ended.current()
      }
    } catch (e) {
      setRunError(errorMessage(e))
    }
  })

  const launch = async () => {
    setPhase("launching")
    setRunError(undefined)
    try {
      await api.post(`${base}/agents/launch/`)
      setPhase("running")
    } catch (e) {
      setRunError(errorMessage(e))
      setPhase("idle")
    }
  }

  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setCreating(true)
    setCreateError(undefined)
    try {
      await api.post<Agent>(`${base}/agents/`, {
        name: name.trim(),
        extraction_instructions: instructions,
        value_type: valueType,
      })
      setName("")
      setInstructions("")
      setValueType("string")
      await agents.reload()
      onAgentsChanged()
    } catch (err) {
      setCreateError(errorMessage(err))
    } finally {
      setCreating(false)
    }
  }

  const list = useMemo(() => sortAgents(agents.data ?? []), [agents.data])
  const progress = extractionProgress(status, phase)
  const editing = list.find((a) => a.id === editingId)

  const closeEditor = (id: string) => {
    setEditingId(null)
    editButtons.current.get(id)?.focus()
  }

  return (
    <section aria-labelledby="agents-heading" className="section">
      <h2 id="agents-heading">Agents</h2>

      <ErrorAlert message={agents.error} />
      {agents.data === undefined ? (
        agents.error ? null : (
          <Loading what="agents" />
        )
      ) : list.length === 0 ? (
        <p className="muted">No agents yet: an agent describes one value to extract.</p>
      ) : (
        <div className="table-wrap">
          <table className="data-table" data-testid="agents-table">
            <caption className="visually-hidden">Agents</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">What to extract</th>
                <th scope="col">Value type</th>
                <th scope="col">Extraction</th>
              </tr>
            </thead>
            <tbody>
              {list.map((a) => (
                <tr key={a.id} data-agent-id={a.id}>
                  <td>
                    <button
                      type="button"
                      className="link-button agent-name"
                      aria-expanded={editingId === a.id}
                      ref={(el) => {
                        if (el) editButtons.current.set(a.id, el)
                        else editButtons.current.delete(a.id)
                      }}
                      onClick={() => setEditingId(editingId === a.id ? null : a.id)}
                    >
                      {a.name}
                    </button>
                    {a.agent_type === "derived" && <span className="muted small"> (derived)</span>}
                  </td>
                  <td className="instructions">
                    {a.extraction_instructions || <span className="muted">—</span>}
                  </td>
                  <td>{a.value_type}</td>
                  <td>{agentProgressText(a, status)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      {editing && (
        <AgentEditor
          key={editing.id}
          base={base}
          agent={editing}
          agents={list}
          dimensions={dimensions}
          onSaved={() => {
            void agents.reload()
            onAgentsChanged()
          }}
          onDeleted={() => {
            setEditingId(null)
            void agents.reload()
            onAgentsChanged()
          }}
          onClose={() => closeEditor(editing.id)}
        />
      )}

      <div className="run-panel">
        <button
          type="button"
          onClick={() => void launch()}
          disabled={phase === "launching" || list.length === 0}
        >
          Launch
        </button>
        {phase !== "idle" && (
          <div className="run-progress">
            <label htmlFor="extraction-progress">Extraction progress</label>
            <progress
              id="extraction-progress"
              max={100}
              {...(progress.percentage === null ? {} : { value: progress.percentage })}
            />
            <span className="muted small">{progress.text}</span>
          </div>
        )}
        <p role="status" className="run-status" data-testid="run-status">
          {phase === "running" || phase === "launching" ? "Running…" : phase === "done" ? "Done" : ""}
        </p>
      </div>
      <ErrorAlert message={runError} />

      <h3>New agent</h3>
      <form className="stack agent-form" onSubmit={create}>
        <div className="field">
          <label htmlFor="agent-name">Agent name</label>
          <input
            id="agent-name"
            name="name"
            required
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="agent-instructions">What to extract</label>
          <textarea
            id="agent-instructions"
            name="extraction_instructions"
            rows={3}
            value={instructions}
            onChange={(e) => setInstructions(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="agent-value-type">Value type</label>
          <select
            id="agent-value-type"
            name="value_type"
            value={valueType}
            onChange={(e) => setValueType(e.target.value === "number" ? "number" : "string")}
          >
            <option value="string">string</option>
            <option value="number">number</option>
          </select>
        </div>
        <ErrorAlert message={createError} />
        <div>
          <button type="submit" disabled={creating || name.trim() === ""}>
            Create agent
          </button>
        </div>
      </form>
    </section>
  )
}

/** Oldest first: the order of the matrix's columns. */
const sortAgents = <A extends Agent>(agents: ReadonlyArray<A>): ReadonlyArray<A> =>
  [...agents].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.name.localeCompare(b.name))

const extractionProgress = (
  status: AgentsStatus | undefined,
  phase: RunPhase,
): { readonly percentage: number | null; readonly text: string } => {
  let total = 0
  let completed = 0
  for (const p of Object.values(status?.progress ?? {})) {
    total += p.extraction.total
    completed += p.extraction.completed
  }
  if (phase === "done")
    return { percentage: 100, text: total > 0 ? `${completed} of ${total} extractions` : "" }
  if (total === 0) return { percentage: null, text: "" }
  return {
    percentage: Math.min(100, Math.round((completed / total) * 100)),
    text: `${completed} of ${total} extractions`,
  }
}

const agentProgressText = (agent: Agent, status: AgentsStatus | undefined): string => {
  const p = status?.progress[agent.id]
  if (p?.is_running) return `Running (${p.extraction.completed} of ${p.extraction.total})`
  if (p?.is_pending) return "Pending"
  return agent.extraction_status
}

// ---------------------------------------------------------------------------------------------------------
// Results matrix

const ALL_DOCUMENTS = "All documents"

const STATUSES: ReadonlyArray<ResolutionStatus> = [
  "Resolved",
  "Requires attention",
  "Not resolved",
  "No result",
  "Ignored",
]

interface Column {
  readonly id: string
  readonly name: string
}

function ResultsSection({
  projectId,
  agents,
  results,
}: {
  readonly projectId: string
  readonly agents: ReadonlyArray<Agent> | undefined
  readonly results: Resource<ResultsPage>
}) {
  const matrix = useMemo(() => buildMatrix(agents ?? [], results.data?.results ?? []), [agents, results.data])

  return (
    <section aria-labelledby="results-heading" className="section">
      <h2 id="results-heading">Results</h2>
      <ErrorAlert message={results.error} />
      {results.data === undefined || agents === undefined ? (
        results.error ? null : (
          <Loading what="results" />
        )
      ) : matrix.columns.length === 0 ? (
        <p className="muted">Create an agent and launch the pipeline to see results here.</p>
      ) : (
        <>
          {matrix.rows.length === 0 && <p className="muted">No results yet: launch the pipeline.</p>}
          <div className="table-wrap">
            <table className="data-table matrix" data-testid="results-matrix">
              <caption className="visually-hidden">Results</caption>
              <thead>
                <tr>
                  <th scope="col">Dimension</th>
                  {matrix.columns.map((c) => (
                    <th scope="col" key={c.id} data-agent-id={c.id}>
                      {c.name}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {matrix.rows.map((row) => (
                  <tr key={row} data-row={row}>
                    <th scope="row">{row}</th>
                    {matrix.columns.map((c) => {
                      const r = matrix.cells.get(row)?.get(c.id)
                      if (!r)
                        return (
                          <td key={c.id} data-agent-id={c.id} className="empty-cell">
                            <span aria-hidden="true">·</span>
                            <span className="visually-hidden">No result yet</span>
                          </td>
                        )
                      const status = r.resolution_result.resolution_status
                      return (
                        <td
                          key={c.id}
                          data-agent-id={c.id}
                          data-status={status}
                          title={status}
                          className={`result-cell ${statusClass(status)}`}
                        >
                          <Link
                            href={`/projects/${seg(projectId)}/agents/${seg(r.agent_id)}/${seg(r.resolution_result.id)}`}
                          >
                            {formatValue(r.resolution_result.value)}
                          </Link>
                        </td>
                      )
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {results.data.count > results.data.results.length && (
            <p className="muted small">
              Showing the first {results.data.results.length} of {results.data.count} results.
            </p>
          )}
          <ul className="legend" aria-label="Status colours">
            {STATUSES.map((s) => (
              <li key={s}>
                <span className={`swatch ${statusClass(s)}`} aria-hidden="true" />
                {s}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  )
}

const rowKey = (r: ResultRow): string => (r.dimension_instances.length === 0 ? ALL_DOCUMENTS : r.result_name)

const buildMatrix = (agents: ReadonlyArray<Agent>, rows: ReadonlyArray<ResultRow>) => {
  const columns: Array<Column> = sortAgents(agents).map((a) => ({ id: a.id, name: a.name }))
  const known = new Set(columns.map((c) => c.id))
  const cells = new Map<string, Map<string, ResultRow>>()
  for (const r of rows) {
    if (!known.has(r.agent_id)) {
      known.add(r.agent_id)
      columns.push({ id: r.agent_id, name: r.agent_name })
    }
    const key = rowKey(r)
    let row = cells.get(key)
    if (!row) {
      row = new Map()
      cells.set(key, row)
    }
    if (!row.has(r.agent_id)) row.set(r.agent_id, r)
  }
  const collator = new Intl.Collator("en", { numeric: true, sensitivity: "base" })
  const rowKeys = [...cells.keys()].sort((a, b) =>
    a === ALL_DOCUMENTS ? -1 : b === ALL_DOCUMENTS ? 1 : collator.compare(a, b),
  )
  return { columns, rows: rowKeys, cells }
}
