import type {
  Agent,
  AgentStatus as AgentsStatus,
  Dimension,
  Document as DocumentRecord,
  Project,
} from "@dxs/domain/Records"
import { useMutation, useQueries } from "@tanstack/react-query"
import { type FormEvent, type MouseEvent, useMemo, useRef, useState } from "react"
import { api, errorMessage, isApiError, seg } from "../api.ts"
import { ErrorAlert, Loading, pluralize } from "../components.tsx"
import type { Resource } from "../hooks.ts"
import { invalidateApi, queryClient, useApiQuery } from "../query.ts"
import { Link, useTitle } from "../router.tsx"
import { runProgressOf } from "../runState.ts"
import { AgentEditor } from "./AgentEditor.tsx"
import { DimensionsSection } from "./DimensionsSection.tsx"
import { DocumentsSection, documentRowId, focusDocumentRow } from "./DocumentsSection.tsx"
import { FileEditPanel } from "./FileEditPanel.tsx"
import { ResultsGrid } from "./ResultsGrid.tsx"
import { StartReview } from "./Review.tsx"
import { RunHistory, type RunTracker, useRunTracker } from "./Runs.tsx"

/**
 * `/projects/:id`: documents (upload, parsing state, e-mail attachments under their message), dimensions,
 * agents (create, edit, launch, progress) and the results grid.
 */
export function ProjectScreen({ projectId }: { readonly projectId: string }) {
  const base = `/projects/${seg(projectId)}`
  const project = useApiQuery<Project>(`${base}/`)
  // The Document dimension's values (every document's name) are not needed here: a page of agents, not of documents.
  const agents = useApiQuery<ReadonlyArray<Agent>>(`${base}/agents/?dimension_values=custom`)
  const dimensions = useApiQuery<ReadonlyArray<Dimension>>(`${base}/dimensions/`)
  const refreshResults = () => void invalidateApi(`${base}/results/`)
  const refreshRefusal = () => void queryClient.invalidateQueries({ queryKey: [REFUSAL] })
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
        <StartReview projectId={projectId} />
      </div>
      {project.data.description && <p className="lead">{project.data.description}</p>}
      <DocumentsSection base={base} onChanged={refreshRefusal} />
      <DimensionsSection base={base} dimensions={dimensions} />
      <AgentsSection
        base={base}
        projectId={projectId}
        agents={agents}
        dimensions={dimensions.data}
        onRefused={refreshRefusal}
        onRunEnded={() => {
          refreshResults()
          void agents.reload()
          void invalidateApi(`${base}/documents/`)
        }}
        onAgentsChanged={refreshResults}
      />
      <ResultsGrid projectId={projectId} />
      <FileEditPanel base={base} />
    </>
  )
}

// ---------------------------------------------------------------------------------------------------------
// Agents and the pipeline run

function AgentsSection({
  base,
  projectId,
  agents,
  dimensions,
  onRefused,
  onRunEnded,
  onAgentsChanged,
}: {
  readonly base: string
  readonly projectId: string
  readonly agents: Resource<ReadonlyArray<Agent>>
  readonly dimensions: ReadonlyArray<Dimension> | undefined
  /** A launch was refused because documents failed: what is known of them may be out of date. */
  readonly onRefused: () => void
  readonly onRunEnded: () => void
  /** An agent was created, changed or deleted: its results may have changed. */
  readonly onAgentsChanged: () => void
}) {
  const [editingId, setEditingId] = useState<string | null>(null)
  const editButtons = useRef(new Map<string, HTMLButtonElement>())
  const { tracker, launch, runError, refused } = useLaunch(base, projectId, onRunEnded, onRefused)

  const list = useMemo(() => sortAgents(agents.data ?? []), [agents.data])
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
        <AgentsTable
          agents={list}
          status={tracker.status}
          editingId={editingId}
          editButtons={editButtons.current}
          onEdit={setEditingId}
        />
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

      <RunPanel tracker={tracker} onLaunch={() => void launch()} noAgents={list.length === 0} />
      <ErrorAlert message={runError} />
      {refused && <LaunchRefusal base={base} refused={refused} />}
      <RunHistory runs={tracker.runs} count={tracker.runCount} error={tracker.runsError} agents={list} />

      <NewAgentForm
        base={base}
        onCreated={async () => {
          await agents.reload()
          onAgentsChanged()
        }}
      />
    </section>
  )
}

/**
 * The project's runs with the launch: a launch refused because documents failed gives those documents
 * (and `onRefused`), any other failure its message.
 */
function useLaunch(base: string, projectId: string, onRunEnded: () => void, onRefused: () => void) {
  const [runError, setRunError] = useState<string | undefined>(undefined)
  const [refused, setRefused] = useState<ReadonlyArray<FailedDocument> | null>(null)
  const tracker = useRunTracker(base, projectId, onRunEnded)

  const launch = async () => {
    setRunError(undefined)
    setRefused(null)
    const error = await tracker.launch()
    if (error === undefined) return
    const failed = failedDocumentsOf(error)
    if (failed) {
      setRefused(failed)
      onRefused()
    } else setRunError(errorMessage(error))
  }

  return { tracker, launch, runError, refused }
}

/** The project's agents, each name a button that opens (or closes) its editor, with its extraction's progress. */
function AgentsTable({
  agents,
  status,
  editingId,
  editButtons,
  onEdit,
}: {
  readonly agents: ReadonlyArray<Agent>
  readonly status: AgentsStatus | undefined
  readonly editingId: string | null
  /** The agents' edit buttons by id, for focus to go back to when the editor closes. */
  readonly editButtons: Map<string, HTMLButtonElement>
  readonly onEdit: (id: string | null) => void
}) {
  return (
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
          {agents.map((a) => (
            <tr key={a.id} data-agent-id={a.id}>
              <td>
                <button
                  type="button"
                  className="link-button agent-name"
                  aria-expanded={editingId === a.id}
                  ref={(el) => {
                    if (el) editButtons.set(a.id, el)
                    else editButtons.delete(a.id)
                  }}
                  onClick={() => onEdit(editingId === a.id ? null : a.id)}
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
  )
}

/** The launch button with the followed run's progress and state. */
function RunPanel({
  tracker,
  onLaunch,
  noAgents,
}: {
  readonly tracker: RunTracker
  readonly onLaunch: () => void
  readonly noAgents: boolean
}) {
  const { view, status } = tracker
  const progress = runProgressOf(view, status)
  return (
    <div className="run-panel">
      <button type="button" onClick={onLaunch} disabled={view.phase === "launching" || noAgents}>
        Launch
      </button>
      {view.phase !== "idle" && (
        <div className="run-progress" data-live={tracker.live}>
          <label htmlFor="extraction-progress">Extraction progress</label>
          <progress
            id="extraction-progress"
            max={100}
            {...(progress.percentage === null ? {} : { value: progress.percentage })}
          />
          <span className="muted small">
            {progress.text}
            {view.phase === "tracking" && !view.finished && !tracker.live
              ? " (no live updates: checked every second)"
              : ""}
          </span>
        </div>
      )}
      <p role="status" className="run-status" data-testid="run-status">
        {progress.state}
      </p>
    </div>
  )
}

/** The form that creates an agent from its name, what to extract and its type of value. */
function NewAgentForm({
  base,
  onCreated,
}: {
  readonly base: string
  readonly onCreated: () => Promise<void>
}) {
  const [name, setName] = useState("")
  const [instructions, setInstructions] = useState("")
  const [valueType, setValueType] = useState<"string" | "number">("string")

  const createAgent = useMutation({
    mutationFn: () =>
      api.post<Agent>(`${base}/agents/`, {
        name: name.trim(),
        extraction_instructions: instructions,
        value_type: valueType,
      }),
    onSuccess: async () => {
      setName("")
      setInstructions("")
      setValueType("string")
      await onCreated()
    },
  })
  const create = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    createAgent.mutate()
  }

  return (
    <>
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
        <ErrorAlert message={createAgent.error ? errorMessage(createAgent.error) : undefined} />
        <div>
          <button type="submit" disabled={createAgent.isPending || name.trim() === ""}>
            Create agent
          </button>
        </div>
      </form>
    </>
  )
}

interface FailedDocument {
  readonly id: string
  readonly name: string
}

/** The `failed_documents` of a launch refused with 409, or null for any other error. */
const failedDocumentsOf = (e: unknown): ReadonlyArray<FailedDocument> | null => {
  if (!isApiError(e) || e.status !== 409 || !Array.isArray(e.body.failed_documents)) return null
  const failed = (e.body.failed_documents as ReadonlyArray<unknown>).flatMap((d) =>
    typeof d === "object" && d !== null && "id" in d && typeof d.id === "string"
      ? [{ id: d.id, name: "name" in d && typeof d.name === "string" ? d.name : d.id }]
      : [],
  )
  return failed.length > 0 ? failed : null
}

/** The query key of the refused documents' states (read again when the documents change). */
const REFUSAL = "launch-refusal"
/** The refused documents read again, at most: the rest are named as the refusal gave them. */
const REFUSAL_CHECKED = 50

/**
 * Why the launch was refused, naming each failed document with a link to its row in the list (where it
 * can be replaced or deleted). Each named document is read again (not the whole list): one since replaced
 * or deleted drops out; once none is left, so does the message.
 */
function LaunchRefusal({
  base,
  refused,
}: {
  readonly base: string
  readonly refused: ReadonlyArray<FailedDocument>
}) {
  const states = useQueries({
    queries: refused.slice(0, REFUSAL_CHECKED).map((f) => ({
      queryKey: [REFUSAL, f.id],
      queryFn: async ({ signal }: { readonly signal: AbortSignal }) => {
        try {
          return await api.get<DocumentRecord>(`${base}/documents/${seg(f.id)}/`, { signal })
        } catch (e) {
          if (isApiError(e) && e.status === 404) return null
          throw e
        }
      },
    })),
  })
  const still = refused.flatMap((f, i) => {
    const d = states[i]?.data
    if (d === undefined) return [f]
    return d?.status === "Failed" ? [{ id: d.id, name: d.file_name }] : []
  })
  if (still.length === 0) return null
  const go = (e: MouseEvent<HTMLAnchorElement>, id: string) => {
    if (focusDocumentRow(id)) e.preventDefault()
  }
  return (
    <div role="alert" className="alert launch-refusal" data-testid="launch-refusal">
      <p>
        {pluralize(still.length, "document")} failed processing:{" "}
        {still.map((f, i) => (
          <span key={f.id}>
            {i > 0 && ", "}
            <a href={`#${documentRowId(f.id)}`} onClick={(e) => go(e, f.id)}>
              {f.name}
            </a>
          </span>
        ))}
        .
      </p>
      <p className="refusal-advice">
        Nothing was launched: replace or delete {still.length === 1 ? "it" : "them"} in the list of documents,
        then launch again.
      </p>
    </div>
  )
}

/** Oldest first: the order of the results grid's columns. */
const sortAgents = <A extends Agent>(agents: ReadonlyArray<A>): ReadonlyArray<A> =>
  [...agents].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.name.localeCompare(b.name))

const agentProgressText = (agent: Agent, status: AgentsStatus | undefined): string => {
  const p = status?.progress[agent.id]
  if (p?.is_running) return `Running (${p.extraction.completed} of ${p.extraction.total})`
  if (p?.is_pending) return "Pending"
  return agent.extraction_status
}
