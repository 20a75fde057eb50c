import type { Folder, Project } from "@dxs/domain/Records"
import { useMutation } from "@tanstack/react-query"
import { type FormEvent, useMemo, useState } from "react"
import { api, errorMessage, seg } from "../api.ts"
import { ErrorAlert, Loading, pluralize, useConfirm, VisuallyHidden } from "../components.tsx"
import { useAction } from "../hooks.ts"
import { invalidateApi, useApiQuery } from "../query.ts"
import { Link, navigate, useTitle } from "../router.tsx"
import {
  ALL_PROJECTS,
  type FolderNode,
  FolderPanel,
  FolderTools,
  focusOnMount,
  folderTree,
  type ProjectFilter,
  UNFILED,
} from "./FolderPanel.tsx"

const collator = new Intl.Collator("en", { numeric: true, sensitivity: "base" })

/** Pinned first, then by name. */
const sortProjects = (projects: ReadonlyArray<Project>): ReadonlyArray<Project> =>
  [...projects].sort(
    (a, b) =>
      Number(b.is_pinned) - Number(a.is_pinned) ||
      collator.compare(a.name, b.name) ||
      a.id.localeCompare(b.id),
  )

/**
 * Which projects the list shows: the folder chosen (or all, or the unfiled ones) and the name searched;
 * with the count of projects of each folder and the list's heading.
 */
function useProjectFilter(
  projects: ReadonlyArray<Project> | undefined,
  folders: ReadonlyArray<Folder> | undefined,
) {
  const [filter, setFilter] = useState<ProjectFilter>(ALL_PROJECTS)
  const [query, setQuery] = useState("")

  const folderList = folders ?? []
  const tree = useMemo(() => folderTree(folders ?? []), [folders])
  const selectedFolder = folderList.find((f) => f.id === filter)
  // a folder that went away (deleted elsewhere) shows every project again
  const activeFilter =
    filter === ALL_PROJECTS || filter === UNFILED || selectedFolder || folders === undefined
      ? filter
      : ALL_PROJECTS

  const counts = useMemo(() => {
    const m = new Map<string, number>()
    const known = new Set((folders ?? []).map((f) => f.id))
    for (const p of projects ?? []) {
      m.set(ALL_PROJECTS, (m.get(ALL_PROJECTS) ?? 0) + 1)
      const key = p.folder_id !== null && known.has(p.folder_id) ? p.folder_id : UNFILED
      m.set(key, (m.get(key) ?? 0) + 1)
    }
    return m
  }, [projects, folders])

  const visible = useMemo(() => {
    const known = new Set((folders ?? []).map((f) => f.id))
    const q = query.trim().toLocaleLowerCase()
    return sortProjects(projects ?? []).filter((p) => {
      const folderId = p.folder_id !== null && known.has(p.folder_id) ? p.folder_id : null
      if (activeFilter === UNFILED && folderId !== null) return false
      if (activeFilter !== UNFILED && activeFilter !== ALL_PROJECTS && folderId !== activeFilter) return false
      return q === "" || p.name.toLocaleLowerCase().includes(q)
    })
  }, [projects, folders, activeFilter, query])

  const listHeading =
    activeFilter === ALL_PROJECTS
      ? "All projects"
      : activeFilter === UNFILED
        ? "Unfiled"
        : selectedFolder?.name

  return {
    setFilter,
    query,
    setQuery,
    folderList,
    tree,
    selectedFolder,
    activeFilter,
    counts,
    visible,
    listHeading,
  }
}

/** `/`: the organisation's projects by folder (search, rename, pin, move, delete) and a form to create one. */
export function ProjectsScreen() {
  useTitle("Projects")
  const projects = useApiQuery<ReadonlyArray<Project>>("/projects/")
  const folders = useApiQuery<ReadonlyArray<Folder>>("/folders/")
  const archived = useApiQuery<ReadonlyArray<Project>>("/projects/?archived=true")
  const {
    setFilter,
    query,
    setQuery,
    folderList,
    tree,
    selectedFolder,
    activeFilter,
    counts,
    visible,
    listHeading,
  } = useProjectFilter(projects.data, folders.data)

  const replaceProject = (updated: Project) =>
    projects.setData((projects.data ?? []).map((p) => (p.id === updated.id ? updated : p)))

  return (
    <>
      <h1>Projects</h1>
      <ErrorAlert message={folders.error} />
      <div className="projects-layout">
        <FolderPanel
          folders={folderList}
          filter={activeFilter}
          counts={counts}
          onFilter={setFilter}
          onCreated={(folder) => {
            folders.setData([...folderList, folder])
          }}
        />
        <section aria-labelledby="project-list-heading" className="projects-main">
          <h2 id="project-list-heading">{listHeading}</h2>
          {selectedFolder && (
            <FolderTools
              key={selectedFolder.id}
              folder={selectedFolder}
              folders={folderList}
              onChanged={(folder) =>
                folders.setData(folderList.map((f) => (f.id === folder.id ? folder : f)))
              }
              onDeleted={() => {
                setFilter(ALL_PROJECTS)
                void folders.reload()
                void projects.reload()
              }}
            />
          )}
          <div className="field search-field">
            <label htmlFor="search-projects">Search projects</label>
            <input
              id="search-projects"
              type="search"
              value={query}
              onChange={(e) => setQuery(e.target.value)}
              autoComplete="off"
            />
          </div>
          <ErrorAlert message={projects.error} />
          {projects.data === undefined ? (
            projects.error ? null : (
              <Loading what="projects" />
            )
          ) : projects.data.length === 0 ? (
            <p className="muted">No projects yet: create the first one below.</p>
          ) : visible.length === 0 ? (
            <p className="muted">
              {query.trim() !== "" ? "No project matches the search." : "No projects in this folder."}
            </p>
          ) : (
            <ul className="project-list" data-testid="project-list">
              {visible.map((p) => (
                <ProjectItem
                  key={p.id}
                  project={p}
                  tree={tree}
                  showFolder={activeFilter === ALL_PROJECTS}
                  onUpdated={replaceProject}
                  onDeleted={() => projects.setData((projects.data ?? []).filter((x) => x.id !== p.id))}
                  onArchived={() => {
                    projects.setData((projects.data ?? []).filter((x) => x.id !== p.id))
                    archived.reload()
                  }}
                />
              ))}
            </ul>
          )}
        </section>
      </div>
      <ArchivedProjects
        projects={archived.data ?? []}
        onRestored={(p) => {
          archived.setData((archived.data ?? []).filter((x) => x.id !== p.id))
          projects.setData([...(projects.data ?? []), p])
        }}
      />
      <NewProject folder={selectedFolder} />
    </>
  )
}

/** The form that creates a project (in the folder chosen, if any), then opens it. */
function NewProject({ folder }: { readonly folder: Folder | undefined }) {
  const [name, setName] = useState("")
  const [perDocument, setPerDocument] = useState(false)

  const createProject = useMutation({
    mutationFn: () =>
      api.post<Project>("/projects/", {
        name: name.trim(),
        auto_attach_document_dimension: perDocument,
        ...(folder ? { folder_id: folder.id } : {}),
      }),
    onSuccess: (project) => {
      void invalidateApi("/projects/")
      navigate(`/projects/${seg(project.id)}`)
    },
  })
  // stays busy from the click until the project's screen replaces this one
  const busy = createProject.isPending || createProject.isSuccess
  const error = createProject.error ? errorMessage(createProject.error) : undefined

  const create = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    createProject.mutate()
  }

  return (
    <section aria-labelledby="new-project-heading" className="section">
      <h2 id="new-project-heading">New project</h2>
      <form className="inline-form" onSubmit={create}>
        <div className="field">
          <label htmlFor="new-project-name">New project name</label>
          <input
            id="new-project-name"
            name="name"
            required
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        </div>
        <button type="submit" disabled={busy || name.trim() === ""}>
          Create project
        </button>
      </form>
      <div className="checkbox-field new-project-options">
        <input
          id="new-project-per-document"
          type="checkbox"
          checked={perDocument}
          onChange={(e) => setPerDocument(e.target.checked)}
          aria-describedby="new-project-per-document-hint"
        />
        <div>
          <label htmlFor="new-project-per-document">One result per document</label>
          <p id="new-project-per-document-hint" className="muted small">
            Each agent gives a value for every document (split by the Document dimension), not one value for
            all the documents together.
          </p>
        </div>
      </div>
      {folder && <p className="muted small">It goes into the folder {folder.name}.</p>}
      <ErrorAlert message={error} />
    </section>
  )
}

/** One project of the list with its actions: rename (inline), pin or unpin, move to a folder, delete. */
function ProjectItem({
  project: p,
  tree,
  showFolder,
  onUpdated,
  onDeleted,
  onArchived,
}: {
  readonly project: Project
  readonly tree: ReadonlyArray<FolderNode>
  readonly showFolder: boolean
  readonly onUpdated: (project: Project) => void
  readonly onDeleted: () => void
  readonly onArchived: () => void
}) {
  const [renaming, setRenaming] = useState(false)
  const [name, setName] = useState(p.name)
  const { busy, error, run } = useAction()
  const path = `/projects/${seg(p.id)}/`
  const folder = tree.find((n) => n.folder.id === p.folder_id)
  const moveId = `move-${p.id}`
  const renameId = `rename-${p.id}`

  const patch = (body: Record<string, unknown>) =>
    run(async () => onUpdated(await api.patch<Project>(path, body)))

  const rename = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    void run(async () => {
      onUpdated(await api.patch<Project>(path, { name: name.trim() }))
      setRenaming(false)
    })
  }

  const archive = () =>
    void run(async () => {
      await api.post(`${path}archive/`)
      onArchived()
    })

  const confirm = useConfirm()
  const remove = () =>
    confirm.ask({
      thing: "project",
      name: p.name,
      details: (
        <p>Its documents, agents, dimensions and results are deleted with it. This cannot be undone.</p>
      ),
      action: async () => {
        await api.del(path)
        onDeleted()
      },
    })

  return (
    <li data-project-id={p.id} className={p.is_pinned ? "pinned" : undefined}>
      <div className="project-summary">
        {renaming ? (
          <form className="inline-form rename-form" onSubmit={rename}>
            <div className="field">
              <label htmlFor={renameId} className="visually-hidden">
                New name for {p.name}
              </label>
              <input
                id={renameId}
                required
                ref={focusOnMount}
                value={name}
                onChange={(e) => setName(e.target.value)}
              />
            </div>
            <button type="submit" disabled={busy || name.trim() === ""}>
              Save name
            </button>
            <button type="button" className="secondary" onClick={() => setRenaming(false)}>
              Cancel<VisuallyHidden> renaming {p.name}</VisuallyHidden>
            </button>
          </form>
        ) : (
          <Link href={`/projects/${seg(p.id)}`} className="project-link">
            {p.name}
          </Link>
        )}
        {p.is_pinned && <span className="pin-badge">Pinned</span>}
        <span className="muted small">
          {pluralize(p.document_count, "document")} · {pluralize(p.agent_count, "agent")}
          {showFolder && folder ? ` · in ${folder.path}` : ""}
        </span>
      </div>
      <div className="project-actions">
        {!renaming && (
          <button
            type="button"
            className="secondary small-button"
            disabled={busy}
            onClick={() => {
              setName(p.name)
              setRenaming(true)
            }}
          >
            Rename<VisuallyHidden> {p.name}</VisuallyHidden>
          </button>
        )}
        <button
          type="button"
          className="secondary small-button"
          disabled={busy}
          onClick={() => void patch({ is_pinned: !p.is_pinned })}
        >
          {p.is_pinned ? "Unpin" : "Pin"}
          <VisuallyHidden> {p.name}</VisuallyHidden>
        </button>
        <label htmlFor={moveId} className="visually-hidden">
          Move {p.name}
        </label>
        <select
          id={moveId}
          className="move-select"
          value={folder ? folder.folder.id : ""}
          disabled={busy}
          onChange={(e) => void patch({ folder_id: e.target.value === "" ? null : e.target.value })}
        >
          <option value="">Unfiled</option>
          {tree.map((n) => (
            <option key={n.folder.id} value={n.folder.id}>
              {n.path}
            </option>
          ))}
        </select>
        <button type="button" className="quiet small-button" disabled={busy} onClick={archive}>
          Archive<VisuallyHidden> {p.name}</VisuallyHidden>
        </button>
        <button type="button" className="quiet danger-text small-button" disabled={busy} onClick={remove}>
          Delete<VisuallyHidden> {p.name}</VisuallyHidden>
        </button>
      </div>
      {error && (
        <p role="alert" className="alert item-alert">
          {error}
        </p>
      )}
      {confirm.dialog}
    </li>
  )
}

/** Projects archived by hand: out of the way, restored with one click. */
function ArchivedProjects({
  projects,
  onRestored,
}: {
  readonly projects: ReadonlyArray<Project>
  readonly onRestored: (project: Project) => void
}) {
  const [error, setError] = useState<string | undefined>(undefined)
  if (projects.length === 0) return null
  const restore = async (p: Project) => {
    setError(undefined)
    try {
      onRestored(await api.post<Project>(`/projects/${seg(p.id)}/unarchive/`))
    } catch (err) {
      setError(errorMessage(err))
    }
  }
  return (
    <section aria-labelledby="archived-heading" className="section">
      <details>
        <summary>
          <h2 id="archived-heading" className="inline-heading">
            Archived projects ({projects.length})
          </h2>
        </summary>
        <ul className="archived-list" data-testid="archived-projects">
          {sortProjects(projects).map((p) => (
            <li key={p.id}>
              <Link href={`/projects/${seg(p.id)}`}>{p.name}</Link>{" "}
              <button type="button" onClick={() => void restore(p)}>
                Restore<VisuallyHidden> {p.name}</VisuallyHidden>
              </button>
            </li>
          ))}
        </ul>
        <ErrorAlert message={error} />
      </details>
    </section>
  )
}
