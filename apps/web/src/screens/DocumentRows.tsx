/**
 * The rows of the documents panel: a document with its status (and failure reason), a link to the viewer,
 * its actions, and, when its attachments are shown, their rows under it (asked for by `parent_document_id`).
 */

import type { DocumentStatus } from "@dxs/domain/Enums"
import type { DocumentListItem, DocumentsPage } from "@dxs/domain/Records"
import { useQuery } from "@tanstack/react-query"
import { errorMessage, seg } from "../api.ts"
import { pluralize, VisuallyHidden } from "../components.tsx"
import { apiQuery } from "../query.ts"
import { Link } from "../router.tsx"
import type { RowState } from "./DocumentsState.ts"

export type ListedDocument = DocumentListItem
export type PageOfDocuments = DocumentsPage

const PARSING_POLL_MS = 2000
/** Attachments listed under a message at most (a message has at most 100). */
const ATTACHMENTS_LIMIT = 100

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

/** The path of a page of the project's documents. */
export const pageOfDocumentsPath = (
  base: string,
  query: {
    readonly limit: number
    readonly offset?: number
    readonly search?: string | undefined
    readonly status?: DocumentStatus | undefined
    readonly parentDocumentId?: string | undefined
  },
): string => {
  const params = new URLSearchParams()
  params.set("limit", String(query.limit))
  if (query.offset) params.set("offset", String(query.offset))
  if (query.search !== undefined) params.set("search", query.search)
  if (query.status !== undefined) params.set("status", query.status)
  if (query.parentDocumentId !== undefined) params.set("parent_document_id", query.parentDocumentId)
  return `${base}/documents/page/?${params.toString()}`
}

/** Asks again every 2 s while a listed document is still being parsed; not once none is. */
export const pollWhileParsing = (query: {
  readonly state: { readonly data?: PageOfDocuments | undefined }
}) => (query.state.data?.results.some((d) => d.status === "Pending") ? PARSING_POLL_MS : false)

export interface RowActions {
  readonly replace: (d: ListedDocument) => void
  readonly reparse: (d: ListedDocument) => Promise<void>
  readonly archive: (d: ListedDocument) => Promise<void>
  readonly remove: (d: ListedDocument) => void
  readonly toggleAttachments: (d: ListedDocument) => void
  readonly toggleSelected: (d: ListedDocument, on: boolean) => void
}

interface RowsProps {
  readonly base: string
  readonly documents: ReadonlyArray<ListedDocument>
  /** The message these documents are attachments of. */
  readonly parent: ListedDocument | undefined
  readonly rows: Readonly<Record<string, RowState>>
  readonly selected: ReadonlySet<string>
  readonly expanded: ReadonlySet<string>
  readonly actions: RowActions
}

/** The rows of `documents`, each followed by its attachments when they are shown. */
export function RowsOf(props: RowsProps) {
  return (
    <>
      {props.documents.map((d) => (
        <DocumentRow key={d.id} {...props} document={d} />
      ))}
    </>
  )
}

function DocumentRow({ document: d, ...props }: RowsProps & { readonly document: ListedDocument }) {
  const { base, parent, rows, selected, expanded, actions } = props
  const row = rows[d.id] ?? {}
  const reasonId = `failure-reason-${d.id}`
  const reason = d.status === "Failed" && d.failure_reason ? d.failure_reason : null
  const open = expanded.has(d.id)
  return (
    <>
      <tr
        id={documentRowId(d.id)}
        data-document-id={d.id}
        data-status={d.status}
        data-parent-document-id={parent?.id}
        className={parent ? "attachment-row" : undefined}
      >
        <td className="select-cell">
          <input
            type="checkbox"
            aria-label={`Select ${d.file_name}`}
            checked={selected.has(d.id)}
            onChange={(e) => actions.toggleSelected(d, e.target.checked)}
          />
        </td>
        <td>
          <span className={parent ? "attachment-name" : undefined}>
            {parent && (
              <>
                <span aria-hidden="true" className="attachment-mark">
                  ↳
                </span>
                <VisuallyHidden>Attachment of {parent.file_name}: </VisuallyHidden>
              </>
            )}
            <Link href={`${base}/documents/${seg(d.id)}`}>{d.file_name}</Link>
          </span>
          {d.attachment_count > 0 && (
            <button
              type="button"
              className="link-button attachments-toggle"
              aria-expanded={open}
              onClick={() => actions.toggleAttachments(d)}
            >
              {open ? "Hide" : "Show"} {pluralize(d.attachment_count, "attachment")}
              <VisuallyHidden> of {d.file_name}</VisuallyHidden>
            </button>
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
            {d.status === "Processed" && (
              <Link href={`${base}/documents/${seg(d.id)}/review`} className="compact-link">
                Review<VisuallyHidden> {d.file_name}</VisuallyHidden>
              </Link>
            )}
            <button
              type="button"
              className="secondary compact"
              aria-describedby={reason ? reasonId : undefined}
              onClick={() => actions.replace(d)}
            >
              Replace<VisuallyHidden> {d.file_name}</VisuallyHidden>
            </button>
            <button
              type="button"
              className="secondary compact"
              disabled={row.busy !== undefined}
              onClick={() => void actions.reparse(d)}
            >
              Re-parse<VisuallyHidden> {d.file_name}</VisuallyHidden>
            </button>
            <button
              type="button"
              className="secondary compact"
              disabled={row.busy !== undefined || d.archive_requested_at !== null}
              onClick={() => void actions.archive(d)}
            >
              {d.archive_requested_at !== null ? "Archiving" : "Archive"}
              <VisuallyHidden> {d.file_name}</VisuallyHidden>
            </button>
            <button type="button" className="danger" onClick={() => actions.remove(d)}>
              Delete<VisuallyHidden> {d.file_name}</VisuallyHidden>
            </button>
          </fieldset>
          {row.busy !== undefined && <span className="small muted">{row.busy}</span>}
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
      {open && <AttachmentRows {...props} message={d} />}
    </>
  )
}

/** A message's attachments, as rows under it. */
function AttachmentRows({ message, ...props }: RowsProps & { readonly message: ListedDocument }) {
  const attachments = useQuery({
    ...apiQuery<PageOfDocuments>(
      pageOfDocumentsPath(props.base, { limit: ATTACHMENTS_LIMIT, parentDocumentId: message.id }),
    ),
    refetchInterval: pollWhileParsing,
  })
  if (attachments.data === undefined)
    return (
      <tr className="attachment-row">
        <td />
        <td colSpan={5} className={attachments.error ? "alert" : "muted"}>
          {attachments.error
            ? errorMessage(attachments.error)
            : `Loading the attachments of ${message.file_name}…`}
        </td>
      </tr>
    )
  return <RowsOf {...props} documents={attachments.data.results} parent={message} />
}
