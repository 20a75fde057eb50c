import type {
  Agent,
  AgentStatus as AgentsStatus,
  Dimension,
  Document as DocumentRecord,
  Project,
} from "@dxs/domain/Records"
import { useMutation, useQueries } from "@tanstack/react-query"
import {
  type FormEvent,
  type KeyboardEvent,
  type MouseEvent,
  useEffect,
  useMemo,
  useRef,
  useState,
} from "react"
import { api, errorMessage, isApiError, seg } from "../api.ts"
import { ErrorAlert, Loading, pluralize, useConfirm } from "../components.tsx"
import { type Resource, useAction } from "../hooks.ts"
import { invalidateApi, queryClient, useApiQuery } from "../query.ts"
import {
  Link,
  replaceQuery,
  scrollToRestore,
  useQueryString,
  useRememberProjectHref,
  useTitle,
} from "../router.tsx"
import { runProgressOf } from "../runState.ts"
import { AgentEditor } from "./AgentEditor.tsx"
import { DimensionsSection } from "./DimensionsSection.tsx"
import { DocumentsSection, documentRowId, focusDocumentRow } from "./DocumentsSection.tsx"
import { FileEditPanel } from "./FileEditPanel.tsx"
import { ResultsGrid } from "./ResultsGrid.tsx"
import { StartReview } from "./Review.tsx"
import { RunHistory, type RunTracker, useRunTracker } from "./Runs.tsx"

/** The project screen's sections, in page order: each in the section nav, the one chosen in the URL (`?section=`). */
const SECTIONS = [
  { key: "documents", label: "Documents" },
  { key: "dimensions", label: "Dimensions" },
  { key: "agents", label: "Agents" },
  { key: "runs", label: "Runs" },
  { key: "results", label: "Results" },
  { key: "file-edit", label: "File edit" },
] as const
type SectionKey = (typeof SECTIONS)[number]["key"]

const sectionId = (key: string) => `section-${key}`
const isSection = (key: string | null): key is SectionKey => SECTIONS.some((s) => s.key === key)

/** Bring a section into view and its heading into focus (where screen readers continue). */
const showSection = (key: SectionKey, behavior: ScrollBehavior = "smooth") => {
  const panel = document.getElementById(sectionId(key))
  if (panel === null) return
  panel.scrollIntoView({ block: "start", behavior })
  const heading = panel.querySelector<HTMLElement>("h2")
  if (heading) {
    if (!heading.hasAttribute("tabindex")) heading.setAttribute("tabindex", "-1")
    heading.focus({ preventScroll: true })
  }
}

/**
 * `/projects/:id` as a workspace: a sticky nav of its sections (documents, dimensions, agents, runs,
 * results, file edit), the chosen one in the URL; the results grid keeps its state in the URL too, so that
 * Back from a result shows the same grid at the same place.
 */
export function ProjectScreen({ projectId }: { readonly projectId: string }) {
  const base = `/projects/${seg(projectId)}`
  const project = useApiQuery<Project>(`${base}/`)
  // The Document dimension's values (every document's name) are not needed here: a page of agents, not of documents.
  const agents = useApiQuery<ReadonlyArray<Agent>>(`${base}/agents/?dimension_values=custom`)
  const dimensions = useApiQuery<ReadonlyArray<Dimension>>(`${base}/dimensions/`)
  const refreshResults = () => void invalidateApi(`${base}/results/`)
  const refreshRefusal = () => void queryClient.invalidateQueries({ queryKey: [REFUSAL] })
  const launch = useLaunch(
    base,
    projectId,
    () => {
      refreshResults()
      void agents.reload()
      void invalidateApi(`${base}/documents/`)
    },
    refreshRefusal,
  )
  useTitle(project.data?.name ?? "Project")
  useRememberProjectHref(projectId)
  const section = useQueryString().get("section")
  const ready = project.data !== undefined
  const [restoring] = useState(scrollToRestore)

  // opened at a section (a link, a reload): shown once the page is there, unless going back to a position
  const shown = useRef(false)
  useEffect(() => {
    if (!ready || shown.current) return
    shown.current = true
    if (!restoring && isSection(section)) requestAnimationFrame(() => showSection(section, "auto"))
  }, [ready, restoring, section])

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

  const select = (key: SectionKey) => {
    const query = new URLSearchParams(window.location.search)
    query.set("section", key)
    replaceQuery(query)
    showSection(key)
  }

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
      <SectionNav selected={isSection(section) ? section : null} onSelect={select} />
      <div id={sectionId("documents")}>
        <DocumentsSection base={base} onChanged={refreshRefusal} />
      </div>
      <div id={sectionId("dimensions")}>
        <DimensionsSection base={base} dimensions={dimensions} />
      </div>
      <div id={sectionId("agents")}>
        <AgentsSection
          base={base}
          agents={agents}
          dimensions={dimensions.data}
          launch={launch}
          onRefusalChanged={refreshRefusal}
          onAgentsChanged={refreshResults}
        />
      </div>
      <div id={sectionId("runs")}>
        <RunHistory
          base={base}
          runs={launch.tracker.runs}
          count={launch.tracker.runCount}
          error={launch.tracker.runsError}
          agents={agents.data}
        />
      </div>
      <div id={sectionId("results")}>
        <ResultsGrid projectId={projectId} />
      </div>
      <div id={sectionId("file-edit")}>
        <FileEditPanel base={base} />
      </div>
    </>
  )
}

/**
 * The sections of the project as a sticky nav of in-page links: Tab reaches it, the arrow keys (and Home,
 * End) move between its links, Enter goes to a section (kept in the URL) and puts the focus on its heading.
 */
function SectionNav({
  selected,
  onSelect,
}: {
  readonly selected: SectionKey | null
  readonly onSelect: (key: SectionKey) => void
}) {
  const links = useRef<Array<HTMLAnchorElement | null>>([])
  const onKey = (e: KeyboardEvent<HTMLAnchorElement>, i: number) => {
    const last = SECTIONS.length - 1
    const to =
      e.key === "ArrowRight" || e.key === "ArrowDown"
        ? i === last
          ? 0
          : i + 1
        : e.key === "ArrowLeft" || e.key === "ArrowUp"
          ? i === 0
            ? last
            : i - 1
          : e.key === "Home"
            ? 0
            : e.key === "End"
              ? last
              : null
    if (to === null) return
    e.preventDefault()
    links.current[to]?.focus()
  }
  return (
    <nav aria-label="Project sections" className="section-nav" data-testid="section-nav">
      <ul>
        {SECTIONS.map((s, i) => (
          <li key={s.key}>
            <a
              href={`?section=${s.key}`}
              ref={(el) => {
                links.current[i] = el
              }}
              aria-current={selected === s.key ? "location" : undefined}
              onKeyDown={(e) => onKey(e, i)}
              onClick={(e) => {
                if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
                e.preventDefault()
                onSelect(s.key)
              }}
            >
              {s.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  )
}

// ---------------------------------------------------------------------------------------------------------
// Agents and the pipeline run

type Launch = ReturnType<typeof useLaunch>

function AgentsSection({
  base,
  agents,
  dimensions,
  launch: { tracker, launch, runError, refused },
  onRefusalChanged,
  onAgentsChanged,
}: {
  readonly base: string
  readonly agents: Resource<ReadonlyArray<Agent>>
  readonly dimensions: ReadonlyArray<Dimension> | undefined
  readonly launch: Launch
  /** Refused documents were re-parsed or deleted: what is known of them is out of date. */
  readonly onRefusalChanged: () => void
  /** An agent was created, changed or deleted: its results may have changed. */
  readonly onAgentsChanged: () => void
}) {
  const [editingId, setEditingId] = useState<string | null>(null)
  const editButtons = useRef(new Map<string, HTMLButtonElement>())

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
      {refused && (
        <LaunchRefusal base={base} refused={refused} onLaunch={launch} onChanged={onRefusalChanged} />
      )}

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
 * can be replaced or deleted), with two ways on: "Re-parse failed" parses each again, "Remove failed and
 * launch" deletes them (once confirmed) and launches again. Each named document is read again (not the
 * whole list): one since replaced, re-parsed or deleted drops out; once none is left, so does the message.
 */
function LaunchRefusal({
  base,
  refused,
  onLaunch,
  onChanged,
}: {
  readonly base: string
  readonly refused: ReadonlyArray<FailedDocument>
  readonly onLaunch: () => Promise<void>
  /** Documents were re-parsed or deleted: their states are read again. */
  readonly onChanged: () => void
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
  const { busy, error, run } = useAction()
  const confirm = useConfirm()
  const still = refused.flatMap((f, i) => {
    const d = states[i]?.data
    if (d === undefined) return [f]
    return d?.status === "Failed" ? [{ id: d.id, name: d.file_name }] : []
  })
  if (still.length === 0) return confirm.dialog
  const go = (e: MouseEvent<HTMLAnchorElement>, id: string) => {
    if (focusDocumentRow(id)) e.preventDefault()
  }
  const documentsChanged = async () => {
    onChanged()
    await invalidateApi(`${base}/documents/`)
  }
  const reparse = () =>
    void run(async () => {
      try {
        for (const f of still) await api.post(`${base}/documents/${seg(f.id)}/reparse/`)
      } finally {
        await documentsChanged()
      }
    })
  const removeAndLaunch = () =>
    confirm.ask({
      thing: still.length === 1 ? "failed document" : `${still.length} failed documents`,
      name: still.map((f) => f.name).join("”, “"),
      details: (
        <p>
          {still.length === 1 ? "It is" : "They are"} deleted from the project, with{" "}
          {still.length === 1 ? "its" : "their"} file and pages; then the extraction is launched again. This
          cannot be undone.
        </p>
      ),
      action: async () => {
        try {
          for (const f of still)
            await api.del(`${base}/documents/${seg(f.id)}/`).catch((e: unknown) => {
              if (!(isApiError(e) && e.status === 404)) throw e
            })
        } finally {
          await documentsChanged()
        }
        await onLaunch()
      },
    })
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
        Nothing was launched: parse {still.length === 1 ? "it" : "them"} again, or remove{" "}
        {still.length === 1 ? "it" : "them"} and launch (or replace or delete{" "}
        {still.length === 1 ? "it" : "them"} in the list of documents).
      </p>
      <div className="refusal-actions">
        <button type="button" className="secondary" disabled={busy} onClick={reparse}>
          Re-parse failed
        </button>
        <button type="button" className="danger" disabled={busy} onClick={removeAndLaunch}>
          Remove failed and launch
        </button>
      </div>
      <ErrorAlert message={error} />
      {confirm.dialog}
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
