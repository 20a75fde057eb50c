/**
 * The documents panel of a project: upload (file picker or drag and drop) with progress; a page of
 * documents at a time (`GET …/documents/page/`) with a name search, a status filter and the failure
 * reason of failed ones; e-mail attachments listed under their message on demand; per document open
 * (the viewer), replace the file, re-parse, archive and delete (confirmed); bulk delete and archive of
 * the selected documents with a summary of those refused. While a listed document is being parsed, the
 * page is asked for again until none is.
 */

import { type DocumentStatus, DocumentStatuses } from "@dxs/domain/Enums"
import type { DocumentBulkResponse } from "@dxs/domain/Records"
import { keepPreviousData, useQuery } from "@tanstack/react-query"
import { type DragEvent, useCallback, useEffect, useRef, useState } from "react"
import { api, errorMessage, seg, uploadFile } from "../api.ts"
import { ConfirmDialog, ErrorAlert, Loading, pluralize, SelectField } from "../components.tsx"
import { apiQuery, invalidateApi } from "../query.ts"
import {
  type ListedDocument,
  type PageOfDocuments,
  pageOfDocumentsPath,
  pollWhileParsing,
  type RowActions,
  RowsOf,
} from "./DocumentRows.tsx"

export { documentRowId, focusDocumentRow } from "./DocumentRows.tsx"

const PAGE_SIZES = [10, 25, 50, 100] as const
const SEARCH_DELAY_MS = 300

interface Upload {
  readonly key: number
  readonly name: string
  readonly fraction: number
  readonly state: "waiting" | "uploading" | "done" | "failed"
  readonly error?: string
}

/** What is under way, or went wrong, for one listed document. */
export interface RowState {
  /** The fraction of a replacement file sent so far, while it is being sent. */
  readonly replacing?: number
  readonly busy?: string
  readonly error?: string
}

/** What a confirmation dialog is asked for: one document's deletion, or an action on the selection. */
type Confirming =
  | { readonly kind: "delete"; readonly document: ListedDocument }
  | { readonly kind: "bulk"; readonly action: "delete" | "archive"; readonly ids: ReadonlyArray<string> }

/** A bulk action's outcome, named for the user. */
interface BulkSummary {
  readonly text: string
  readonly failures: ReadonlyArray<string>
}

/** `value`, once it has stayed the same for `delay` ms. */
function useDebounced<T>(value: T, delay: number): T {
  const [settled, setSettled] = useState(value)
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delay)
    return () => clearTimeout(timer)
  }, [value, delay])
  return settled
}

export function DocumentsSection({
  base,
  onChanged,
}: {
  readonly base: string
  /** The project's documents changed (an upload, a parse that ended, an action): other lists may follow. */
  readonly onChanged?: () => void
}) {
  const [uploads, setUploads] = useState<ReadonlyArray<Upload>>([])
  const [dragging, setDragging] = useState(false)
  const queue = useRef<Promise<void>>(Promise.resolve())
  const nextKey = useRef(0)
  const input = useRef<HTMLInputElement>(null)
  const heading = useRef<HTMLHeadingElement>(null)
  const replaceInput = useRef<HTMLInputElement>(null)
  const replaceTarget = useRef<ListedDocument | null>(null)
  const [rows, setRows] = useState<Readonly<Record<string, RowState>>>({})
  const [announcement, setAnnouncement] = useState("")
  const [confirming, setConfirming] = useState<Confirming | null>(null)
  const [confirmBusy, setConfirmBusy] = useState(false)
  const [confirmError, setConfirmError] = useState<string | undefined>(undefined)
  const [focusHeading, setFocusHeading] = useState(0)
  const [search, setSearch] = useState("")
  const [status, setStatus] = useState<DocumentStatus | "">("")
  const [pageSize, setPageSize] = useState<number>(25)
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set())
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set())
  const [bulkSummary, setBulkSummary] = useState<BulkSummary | null>(null)
  const changed = useRef(onChanged)
  changed.current = onChanged

  const searched = useDebounced(search.trim(), SEARCH_DELAY_MS)
  // Another filter or page size starts again at the first page.
  const filters = `${pageSize}|${status}|${searched}`
  const [paging, setPaging] = useState({ filters, offset: 0 })
  const offset = paging.filters === filters ? paging.offset : 0
  const setOffset = (n: number) => setPaging({ filters, offset: n })

  const path = pageOfDocumentsPath(base, {
    limit: pageSize,
    offset,
    search: searched === "" ? undefined : searched.slice(0, 200),
    status: status === "" ? undefined : status,
  })
  const documents = useQuery({
    ...apiQuery<PageOfDocuments>(path),
    placeholderData: keepPreviousData,
    refetchInterval: pollWhileParsing,
  })
  const page = documents.data

  // Every new answer may change what other sections show (the launch refusal's failed documents).
  useEffect(() => {
    if (documents.dataUpdatedAt > 0) changed.current?.()
  }, [documents.dataUpdatedAt])

  // A page emptied by deletions: back to the last page that has documents.
  useEffect(() => {
    if (
      page !== undefined &&
      !documents.isPlaceholderData &&
      page.results.length === 0 &&
      page.count > 0 &&
      offset > 0
    )
      setPaging({ filters, offset: Math.max(0, Math.floor((page.count - 1) / pageSize) * pageSize) })
  }, [page, documents.isPlaceholderData, offset, pageSize, filters])

  // The selection holds only documents still listed on the page.
  useEffect(() => {
    if (page === undefined) return
    setSelected((all) => {
      const listed = new Set(page.results.map((d) => d.id))
      const kept = [...all].filter((id) => listed.has(id))
      return kept.length === all.size ? all : new Set(kept)
    })
  }, [page])

  useEffect(() => {
    if (focusHeading > 0) heading.current?.focus()
  }, [focusHeading])

  const refresh = useCallback(() => invalidateApi(`${base}/documents/`), [base])

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
          await uploadFile(`${base}/documents/`, file, (fraction) => update(key, { fraction }))
          update(key, { state: "done", fraction: 1 })
          await refresh()
        } catch (e) {
          update(key, { state: "failed", error: errorMessage(e) })
        }
      })
    }
  }

  const setRow = useCallback((id: string, state: RowState) => {
    setRows((all) => ({ ...all, [id]: state }))
  }, [])

  const stillParsing = (d: ListedDocument, what: string) => {
    if (d.status !== "Pending") return false
    setRow(d.id, { error: `${d.file_name} is still being parsed: ${what} once it is Processed or Failed.` })
    return true
  }

  const actions: RowActions = {
    replace: (d) => {
      // The API refuses a replacement while the current file is being parsed: said before a file is picked.
      if (stillParsing(d, "replace its file")) return
      setRow(d.id, {})
      replaceTarget.current = d
      replaceInput.current?.click()
    },
    reparse: async (d) => {
      if (stillParsing(d, "parse it again")) return
      setRow(d.id, { busy: "Re-parsing…" })
      try {
        await api.post(`${base}/documents/${seg(d.id)}/reparse/`)
        setRow(d.id, {})
        setAnnouncement(`${d.file_name} is being parsed again.`)
      } catch (e) {
        setRow(d.id, { error: errorMessage(e) })
      }
      await refresh()
    },
    archive: async (d) => {
      setRow(d.id, { busy: "Archiving…" })
      try {
        await api.post(`${base}/documents/${seg(d.id)}/archive/`)
        setRow(d.id, {})
        setAnnouncement(`${d.file_name} is being moved to the archive.`)
      } catch (e) {
        setRow(d.id, { error: errorMessage(e) })
      }
      await refresh()
    },
    remove: (d) => {
      setConfirmError(undefined)
      setConfirming({ kind: "delete", document: d })
    },
    toggleAttachments: (d) =>
      setExpanded((all) => {
        const next = new Set(all)
        if (next.has(d.id)) next.delete(d.id)
        else next.add(d.id)
        return next
      }),
    toggleSelected: (d, on) =>
      setSelected((all) => {
        const next = new Set(all)
        if (on) next.add(d.id)
        else next.delete(d.id)
        return next
      }),
  }

  const replace = async (d: ListedDocument, file: File) => {
    setRow(d.id, { replacing: 0 })
    setAnnouncement(`Replacing ${d.file_name} with ${file.name}…`)
    try {
      await uploadFile(
        `${base}/documents/${seg(d.id)}/file/`,
        file,
        (fraction) => setRow(d.id, { replacing: fraction }),
        "PUT",
      )
      setRow(d.id, {})
      setAnnouncement(`${d.file_name} replaced by ${file.name}.`)
    } catch (e) {
      setRow(d.id, { error: errorMessage(e) })
      setAnnouncement("")
    }
    await refresh()
  }

  const confirm = async () => {
    const c = confirming
    if (c === null) return
    setConfirmBusy(true)
    setConfirmError(undefined)
    try {
      if (c.kind === "delete") {
        await api.del(`${base}/documents/${seg(c.document.id)}/`)
        setAnnouncement(`${c.document.file_name} deleted.`)
      } else {
        const answer = await api.post<DocumentBulkResponse>(`${base}/documents/bulk/`, {
          action: c.action,
          document_ids: c.ids,
        })
        setBulkSummary(bulkSummaryOf(c.action, answer, page?.results ?? []))
        setSelected(new Set())
      }
      setConfirming(null)
      // The row or button that held the focus may be gone: it goes to the panel's heading.
      setFocusHeading((n) => n + 1)
      await refresh()
    } catch (e) {
      setConfirmError(errorMessage(e))
    } finally {
      setConfirmBusy(false)
    }
  }

  const onDrop = (e: DragEvent<HTMLDivElement>) => {
    e.preventDefault()
    setDragging(false)
    if (e.dataTransfer.files.length > 0) addFiles(e.dataTransfer.files)
  }

  const finished = uploads.some((u) => u.state === "done" || u.state === "failed")
  const listed = page?.results ?? []
  const allSelected = listed.length > 0 && listed.every((d) => selected.has(d.id))
  const filtering = searched !== "" || status !== ""
  const last = page === undefined ? 0 : Math.min(offset + listed.length, page.count)

  return (
    <section aria-labelledby="documents-heading" className="section" data-testid="documents-panel">
      <h2 id="documents-heading" ref={heading} tabIndex={-1}>
        Documents
      </h2>
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

      <search className="document-filters" aria-label="Filter documents">
        <div className="field">
          <label htmlFor="documents-search">Search documents</label>
          <input
            id="documents-search"
            type="search"
            value={search}
            maxLength={200}
            placeholder="Part of a file name"
            onChange={(e) => setSearch(e.target.value)}
          />
        </div>
        <div className="field">
          <SelectField
            id="documents-status"
            label="Document status"
            value={status}
            any="Any status"
            options={DocumentStatuses}
            onChange={(v) => setStatus(v as DocumentStatus | "")}
          />
        </div>
        <div className="field">
          <SelectField
            id="documents-page-size"
            label="Documents per page"
            value={pageSize}
            options={PAGE_SIZES}
            onChange={(v) => setPageSize(Number(v))}
          />
        </div>
      </search>

      <ErrorAlert message={documents.error ? errorMessage(documents.error) : undefined} />
      <p role="status" className="muted small doc-announcement">
        {announcement}
      </p>
      {bulkSummary && (
        <div
          className={bulkSummary.failures.length > 0 ? "alert bulk-summary" : "bulk-summary"}
          role={bulkSummary.failures.length > 0 ? "alert" : "status"}
          data-testid="bulk-summary"
        >
          <p>{bulkSummary.text}</p>
          {bulkSummary.failures.length > 0 && (
            <ul>
              {bulkSummary.failures.map((f) => (
                <li key={f}>{f}</li>
              ))}
            </ul>
          )}
          <button type="button" className="link-button" onClick={() => setBulkSummary(null)}>
            Dismiss
          </button>
        </div>
      )}

      {page === undefined ? (
        documents.error ? null : (
          <Loading what="documents" />
        )
      ) : page.count === 0 && !filtering ? (
        <p className="muted">No documents yet.</p>
      ) : (
        <>
          <div className="bulk-bar">
            <span className="muted small" data-testid="documents-range">
              {page.count === 0
                ? "No document matches the filters."
                : `${offset + 1}–${last} of ${pluralize(page.count, "document")}`}
            </span>
            <span className="small">{selected.size > 0 ? `${selected.size} selected` : ""}</span>
            <button
              type="button"
              className="secondary compact"
              disabled={selected.size === 0}
              onClick={() => {
                setConfirmError(undefined)
                setConfirming({ kind: "bulk", action: "archive", ids: [...selected] })
              }}
            >
              Archive selected
            </button>
            <button
              type="button"
              className="danger"
              disabled={selected.size === 0}
              onClick={() => {
                setConfirmError(undefined)
                setConfirming({ kind: "bulk", action: "delete", ids: [...selected] })
              }}
            >
              Delete selected
            </button>
          </div>
          <div className="table-wrap">
            <table className="data-table" data-testid="documents-table">
              <caption className="visually-hidden">Documents</caption>
              <thead>
                <tr>
                  <th scope="col" className="select-cell">
                    <input
                      type="checkbox"
                      aria-label="Select all documents on this page"
                      checked={allSelected}
                      disabled={listed.length === 0}
                      onChange={(e) =>
                        setSelected(e.target.checked ? new Set(listed.map((d) => d.id)) : new Set())
                      }
                    />
                  </th>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col" className="num">
                    Pages
                  </th>
                  <th scope="col">Status</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                <RowsOf
                  base={base}
                  documents={listed}
                  parent={undefined}
                  rows={rows}
                  selected={selected}
                  expanded={expanded}
                  actions={actions}
                />
              </tbody>
            </table>
          </div>
          <nav className="pager" aria-label="Pages of documents">
            <button
              type="button"
              className="secondary compact"
              disabled={offset === 0}
              onClick={() => setOffset(Math.max(0, offset - pageSize))}
            >
              Previous page
            </button>
            <span className="small">
              Page {Math.floor(offset / pageSize) + 1} of {Math.max(1, Math.ceil(page.count / pageSize))}
            </span>
            <button
              type="button"
              className="secondary compact"
              disabled={page.next === null}
              onClick={() => setOffset(offset + pageSize)}
            >
              Next page
            </button>
          </nav>
        </>
      )}

      {/* One picker for every row's Replace button, which opens it. */}
      <input
        ref={replaceInput}
        type="file"
        hidden
        tabIndex={-1}
        data-testid="replace-file-input"
        onChange={(e) => {
          const file = e.target.files?.[0]
          const target = replaceTarget.current
          e.target.value = ""
          replaceTarget.current = null
          if (file && target) void replace(target, file)
        }}
      />

      {confirming?.kind === "delete" && (
        <ConfirmDialog
          title={`Delete ${confirming.document.file_name}?`}
          confirmLabel="Delete document"
          busyLabel="Deleting…"
          busy={confirmBusy}
          error={confirmError}
          onConfirm={() => void confirm()}
          onCancel={() => setConfirming(null)}
        >
          <p>The document, its file and its pages are removed from the project. This cannot be undone.</p>
          <AttachmentsNote count={confirming.document.attachment_count} />
        </ConfirmDialog>
      )}
      {confirming?.kind === "bulk" && (
        <ConfirmDialog
          title={`${confirming.action === "delete" ? "Delete" : "Archive"} ${pluralize(confirming.ids.length, "document")}?`}
          confirmLabel={confirming.action === "delete" ? "Delete documents" : "Archive documents"}
          busyLabel={confirming.action === "delete" ? "Deleting…" : "Archiving…"}
          busy={confirmBusy}
          error={confirmError}
          onConfirm={() => void confirm()}
          onCancel={() => setConfirming(null)}
        >
          {confirming.action === "delete" ? (
            <p>The selected documents, their files and their pages are removed. This cannot be undone.</p>
          ) : (
            <p>The selected documents move into the project's archive project.</p>
          )}
        </ConfirmDialog>
      )}
    </section>
  )
}

const bulkSummaryOf = (
  action: "delete" | "archive",
  answer: DocumentBulkResponse,
  listed: ReadonlyArray<ListedDocument>,
): BulkSummary => {
  const nameOf = (id: string) => listed.find((d) => d.id === id)?.file_name ?? id
  const done = action === "delete" ? "Deleted" : "Archived"
  const text =
    answer.failed.length === 0
      ? `${done} ${pluralize(answer.succeeded.length, "document")}.`
      : `${done} ${pluralize(answer.succeeded.length, "document")}; ${answer.failed.length} could not be ${action === "delete" ? "deleted" : "archived"}:`
  return { text, failures: answer.failed.map((f) => `${nameOf(f.document_id)}: ${f.detail}`) }
}

/** What a deletion leaves of an e-mail's attachments. */
function AttachmentsNote({ count }: { readonly count: number }) {
  if (count === 0) return null
  return (
    <p>
      {count === 1
        ? "Its attachment stays in the project as a document of its own."
        : `Its ${count} attachments stay in the project as documents of their own.`}
    </p>
  )
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
