/**
 * The folders of the projects screen: the filter list (all projects, unfiled ones, each folder as a tree)
 * with a form to create a folder, and the tools of the selected folder (rename, move, delete).
 */

import type { Folder } from "@dxs/domain/Records"
import { useMutation } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import { api, errorMessage, seg } from "../api.ts"
import { ErrorAlert, useConfirm, VisuallyHidden } from "../components.tsx"
import { useAction } from "../hooks.ts"

/** The filter of the project list: every project, the unfiled ones, or a folder's (its id). */
export type ProjectFilter = "all" | "unfiled" | (string & {})
export const ALL_PROJECTS: ProjectFilter = "all"
export const UNFILED: ProjectFilter = "unfiled"

export interface FolderNode {
  readonly folder: Folder
  readonly depth: number
  /** The names from the root down to this folder, joined with " / ". */
  readonly path: string
}

const collator = new Intl.Collator("en", { numeric: true, sensitivity: "base" })

/** The folders depth first, siblings by name; a folder whose parent is unknown counts as a root. */
export const folderTree = (folders: ReadonlyArray<Folder>): ReadonlyArray<FolderNode> => {
  const known = new Set(folders.map((f) => f.id))
  const children = new Map<string | null, Array<Folder>>()
  for (const f of folders) {
    const parent = f.parent_id !== null && known.has(f.parent_id) ? f.parent_id : null
    const list = children.get(parent) ?? []
    list.push(f)
    children.set(parent, list)
  }
  const out: Array<FolderNode> = []
  const seen = new Set<string>()
  const visit = (parent: string | null, depth: number, prefix: string) => {
    const list = [...(children.get(parent) ?? [])].sort((a, b) => collator.compare(a.name, b.name))
    for (const folder of list) {
      if (seen.has(folder.id)) continue
      seen.add(folder.id)
      const path = prefix ? `${prefix} / ${folder.name}` : folder.name
      out.push({ folder, depth, path })
      visit(folder.id, depth + 1, path)
    }
  }
  visit(null, 0, "")
  return out
}

/** A ref that focuses (and selects) a text field once it appears, e.g. the field of an inline rename. */
export const focusOnMount = (el: HTMLInputElement | null): void => {
  if (!el) return
  el.focus()
  el.select()
}

/** The ids of a folder and of every folder below it. */
const subtreeIds = (folders: ReadonlyArray<Folder>, id: string): ReadonlySet<string> => {
  const ids = new Set([id])
  let grew = true
  while (grew) {
    grew = false
    for (const f of folders)
      if (f.parent_id !== null && ids.has(f.parent_id) && !ids.has(f.id)) {
        ids.add(f.id)
        grew = true
      }
  }
  return ids
}

export function FolderPanel({
  folders,
  filter,
  counts,
  onFilter,
  onCreated,
}: {
  readonly folders: ReadonlyArray<Folder>
  readonly filter: ProjectFilter
  /** Number of projects by filter (`all`, `unfiled`, folder id). */
  readonly counts: ReadonlyMap<string, number>
  readonly onFilter: (filter: ProjectFilter) => void
  readonly onCreated: (folder: Folder) => void
}) {
  const [name, setName] = useState("")
  const [parentId, setParentId] = useState("")
  const tree = folderTree(folders)
  const createFolder = useMutation({
    mutationFn: () =>
      api.post<Folder>("/folders/", { name: name.trim(), parent_id: parentId === "" ? null : parentId }),
    onSuccess: (folder) => {
      setName("")
      onCreated(folder)
    },
  })
  const busy = createFolder.isPending
  const error = createFolder.error ? errorMessage(createFolder.error) : undefined

  const create = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    createFolder.mutate()
  }

  const item = (key: ProjectFilter, label: string, depth = 0) => (
    <li key={key} style={depth > 0 ? { paddingLeft: `${depth * 1.1}rem` } : undefined}>
      <button
        type="button"
        className="filter-button"
        aria-pressed={filter === key}
        onClick={() => onFilter(key)}
        data-folder-id={key === ALL_PROJECTS || key === UNFILED ? undefined : key}
      >
        {label}
      </button>
      <span className="count">
        {counts.get(key) ?? 0}
        <VisuallyHidden> projects</VisuallyHidden>
      </span>
    </li>
  )

  return (
    <section aria-labelledby="folders-heading" className="folder-panel">
      <h2 id="folders-heading">Folders</h2>
      <ul className="folder-list" data-testid="folder-list">
        {item(ALL_PROJECTS, "All projects")}
        {item(UNFILED, "Unfiled")}
        {tree.map((n) => item(n.folder.id, n.folder.name, n.depth))}
      </ul>
      <form className="stack folder-form" onSubmit={create}>
        <div className="field">
          <label htmlFor="new-folder-name">New folder name</label>
          <input id="new-folder-name" required value={name} onChange={(e) => setName(e.target.value)} />
        </div>
        {tree.length > 0 && (
          <div className="field">
            <label htmlFor="new-folder-parent">Inside folder</label>
            <select id="new-folder-parent" value={parentId} onChange={(e) => setParentId(e.target.value)}>
              <option value="">None (top level)</option>
              {tree.map((n) => (
                <option key={n.folder.id} value={n.folder.id}>
                  {n.path}
                </option>
              ))}
            </select>
          </div>
        )}
        <ErrorAlert message={error} />
        <div>
          <button type="submit" className="secondary" disabled={busy || name.trim() === ""}>
            Create folder
          </button>
        </div>
      </form>
    </section>
  )
}

/** Rename, move (to another parent) and delete the selected folder. */
export function FolderTools({
  folder,
  folders,
  onChanged,
  onDeleted,
}: {
  readonly folder: Folder
  readonly folders: ReadonlyArray<Folder>
  readonly onChanged: (folder: Folder) => void
  readonly onDeleted: () => void
}) {
  const [renaming, setRenaming] = useState(false)
  const [name, setName] = useState(folder.name)
  const { busy, error, run } = useAction()
  const path = `/folders/${seg(folder.id)}/`
  const excluded = subtreeIds(folders, folder.id)
  const parents = folderTree(folders).filter((n) => !excluded.has(n.folder.id))

  const rename = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    void run(async () => {
      onChanged(await api.patch<Folder>(path, { name: name.trim() }))
      setRenaming(false)
    })
  }

  const confirm = useConfirm()
  const remove = () =>
    confirm.ask({
      thing: "folder",
      name: folder.name,
      details: <p>Its subfolders are deleted with it; the projects in them are kept, unfiled.</p>,
      action: async () => {
        await api.del(path)
        onDeleted()
      },
    })

  return (
    <div className="folder-tools">
      {renaming ? (
        <form className="inline-form" onSubmit={rename}>
          <div className="field">
            <label htmlFor="rename-folder">New name for folder {folder.name}</label>
            <input
              id="rename-folder"
              required
              ref={focusOnMount}
              value={name}
              onChange={(e) => setName(e.target.value)}
            />
          </div>
          <button type="submit" disabled={busy || name.trim() === ""}>
            Save folder name
          </button>
          <button type="button" className="secondary" onClick={() => setRenaming(false)}>
            Cancel<VisuallyHidden> renaming folder {folder.name}</VisuallyHidden>
          </button>
        </form>
      ) : (
        <div className="folder-actions">
          <button
            type="button"
            className="secondary"
            onClick={() => {
              setName(folder.name)
              setRenaming(true)
            }}
          >
            Rename folder<VisuallyHidden> {folder.name}</VisuallyHidden>
          </button>
          <div className="field inline-field">
            <label htmlFor="folder-parent">Parent folder</label>
            <select
              id="folder-parent"
              value={folder.parent_id ?? ""}
              disabled={busy}
              onChange={(e) => {
                const parent_id = e.target.value === "" ? null : e.target.value
                void run(async () => onChanged(await api.patch<Folder>(path, { parent_id })))
              }}
            >
              <option value="">None (top level)</option>
              {parents.map((n) => (
                <option key={n.folder.id} value={n.folder.id}>
                  {n.path}
                </option>
              ))}
            </select>
          </div>
          <button type="button" className="danger" disabled={busy} onClick={remove}>
            Delete folder<VisuallyHidden> {folder.name}</VisuallyHidden>
          </button>
        </div>
      )}
      <ErrorAlert message={error} />
      {confirm.dialog}
    </div>
  )
}
