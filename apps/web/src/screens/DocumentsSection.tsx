/**
 * The documents of a project: upload (file picker or drag and drop) with progress, the list with parsing
 * state and e-mail attachments under their message, and per document a replacement file or deletion.
 */

import type { Document as DocumentRecord } from "@dxs/domain/Records"
import { type DragEvent, useCallback, useEffect, useRef, useState } from "react"
import { api, errorMessage, seg, uploadFile } from "../api.ts"
import { ConfirmDialog, ErrorAlert, Loading, pluralize, VisuallyHidden } from "../components.tsx"
import { type Resource, usePolling } from "../hooks.ts"

const DOCUMENTS_POLL_MS = 2000

/** The id of a document's row in the list: the target of links to it (the launch refusal's). */
export const documentRowId = (documentId: string): string => `document-${documentId}`

/**
 * Scrolls a document's row into view and moves the focus to it (Tab then reaches its actions). The row is
 * focusable only meanwhile, so that clicking in the list does not select rows.
 */
export const focusDocumentRow = (documentId: string): boolean => {
  const row = document.getElementById(documentRowId(documentId))
  if (!row) return false
  row.tabIndex = -1
  row.addEventListener("blur", () => row.removeAttribute("tabindex"), { once: true })
  row.scrollIntoView({ block: "center" })
  row.focus({ preventScroll: true })
  return true
}

interface Upload {
  readonly key: number
  readonly name: string
  readonly fraction: number
  readonly state: "waiting" | "uploading" | "done" | "failed"
  readonly error?: string
}

/** What is under way, or went wrong, for one listed document. */
interface RowState {
  /** The fraction of a replacement file sent so far, while it is being sent. */
  readonly replacing?: number
  readonly error?: string
}

export function DocumentsSection({
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
  const heading = useRef<HTMLHeadingElement>(null)
  const replaceInput = useRef<HTMLInputElement>(null)
  const replaceTarget = useRef<DocumentRecord | null>(null)
  const [rows, setRows] = useState<Readonly<Record<string, RowState>>>({})
  const [announcement, setAnnouncement] = useState("")
  const [confirming, setConfirming] = useState<DocumentRecord | null>(null)
  const [deleting, setDeleting] = useState(false)
  const [deleteError, setDeleteError] = useState<string | undefined>(undefined)
  const [deletedCount, setDeletedCount] = useState(0)

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

  const setRow = useCallback((id: string, state: RowState) => {
    setRows((all) => ({ ...all, [id]: state }))
  }, [])

  const pickReplacement = (d: DocumentRecord) => {
    // The API refuses a replacement while the current file is being parsed: said before a file is picked.
    if (d.status === "Pending") {
      setRow(d.id, {
        error: `${d.file_name} is still being parsed: replace its file once it is Processed or Failed.`,
      })
      return
    }
    setRow(d.id, {})
    replaceTarget.current = d
    replaceInput.current?.click()
  }

  const replace = async (d: DocumentRecord, file: File) => {
    setRow(d.id, { replacing: 0 })
    setAnnouncement(`Replacing ${d.file_name} with ${file.name}…`)
    try {
      const updated = await uploadFile<DocumentRecord | undefined>(
        `${base}/documents/${seg(d.id)}/file/`,
        file,
        (fraction) => setRow(d.id, { replacing: fraction }),
        "PUT",
      )
      setRow(d.id, {})
      if (updated) documents.setData((all) => all?.map((x) => (x.id === updated.id ? updated : x)))
      setAnnouncement(`${d.file_name} replaced by ${file.name}.`)
    } catch (e) {
      setRow(d.id, { error: errorMessage(e) })
      setAnnouncement("")
    }
    await documents.reload()
  }

  const askDelete = (d: DocumentRecord) => {
    setDeleteError(undefined)
    setConfirming(d)
  }

  const confirmDelete = async () => {
    const d = confirming
    if (d === null) return
    setDeleting(true)
    setDeleteError(undefined)
    try {
      await api.del(`${base}/documents/${seg(d.id)}/`)
      // Attachments of a deleted e-mail stay, as documents of their own.
      documents.setData((all) =>
        all
          ?.filter((x) => x.id !== d.id)
          .map((x) => (x.parent_document_id === d.id ? { ...x, parent_document_id: null } : x)),
      )
      setConfirming(null)
      setAnnouncement(`${d.file_name} deleted.`)
      setDeletedCount((n) => n + 1)
      void documents.reload()
    } catch (e) {
      setDeleteError(errorMessage(e))
    } finally {
      setDeleting(false)
    }
  }

  // The deleted row held the focus (its Delete button): it goes to the list's heading.
  useEffect(() => {
    if (deletedCount > 0) heading.current?.focus()
  }, [deletedCount])

  const onDrop = (e: DragEvent<HTMLDivElement>) => {
    e.preventDefault()
    setDragging(false)
    if (e.dataTransfer.files.length > 0) addFiles(e.dataTransfer.files)
  }

  const finished = uploads.some((u) => u.state === "done" || u.state === "failed")

  return (
    <section aria-labelledby="documents-heading" className="section">
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

      <ErrorAlert message={documents.error} />
      <p role="status" className="muted small doc-announcement">
        {announcement}
      </p>
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
                  <th scope="col" className="num">
                    Pages
                  </th>
                  <th scope="col">Status</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {withAttachments(documents.data).map(({ document: d, parent }) => {
                  const row = rows[d.id] ?? {}
                  const reasonId = `failure-reason-${d.id}`
                  const reason = d.status === "Failed" && d.failure_reason ? d.failure_reason : null
                  return (
                    <tr
                      key={d.id}
                      id={documentRowId(d.id)}
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
                      <td className="num">{d.status === "Processed" ? d.page_count : "—"}</td>
                      <td>
                        <span className={`doc-status doc-${d.status.toLowerCase()}`}>{d.status}</span>
                        {reason && (
                          <span id={reasonId} className="failure-reason">
                            {reason}
                          </span>
                        )}
                      </td>
                      <td>
                        {/* The group's legend keeps the cell's name short: each button names its document. */}
                        <fieldset className="row-actions">
                          <legend className="visually-hidden">Actions</legend>
                          <button
                            type="button"
                            className="secondary compact"
                            aria-describedby={reason ? reasonId : undefined}
                            onClick={() => pickReplacement(d)}
                          >
                            Replace<VisuallyHidden> {d.file_name}</VisuallyHidden>
                          </button>
                          <button type="button" className="danger" onClick={() => askDelete(d)}>
                            Delete<VisuallyHidden> {d.file_name}</VisuallyHidden>
                          </button>
                        </fieldset>
                        {row.replacing !== undefined && (
                          <span className="row-progress">
                            <progress
                              max={100}
                              value={Math.round(row.replacing * 100)}
                              aria-label={`Replacement of ${d.file_name}`}
                            />
                            <span className="small">Uploading… {Math.round(row.replacing * 100)}%</span>
                          </span>
                        )}
                        {row.error && (
                          <span role="alert" className="alert inline row-error">
                            {row.error}
                          </span>
                        )}
                      </td>
                    </tr>
                  )
                })}
              </tbody>
            </table>
          </div>
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

      {confirming && (
        <ConfirmDialog
          title={`Delete ${confirming.file_name}?`}
          confirmLabel="Delete document"
          busyLabel="Deleting…"
          busy={deleting}
          error={deleteError}
          onConfirm={() => void confirmDelete()}
          onCancel={() => setConfirming(null)}
        >
          <p>The document, its file and its pages are removed from the project. This cannot be undone.</p>
          <AttachmentsNote count={attachmentCount(documents.data ?? [], confirming.id)} />
        </ConfirmDialog>
      )}
    </section>
  )
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

const attachmentCount = (docs: ReadonlyArray<DocumentRecord>, documentId: string): number =>
  docs.filter((d) => d.parent_document_id === documentId && d.id !== documentId).length

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
