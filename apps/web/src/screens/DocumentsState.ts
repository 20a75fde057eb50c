/**
 * The state of the documents panel (DocumentsSection.tsx), each concern in a hook of its own: the page of
 * documents with its filters, a set of ids (selection, expanded messages), the confirmation dialog, and
 * what is under way for each listed document.
 */

import type { DocumentStatus } from "@dxs/domain/Enums"
import { keepPreviousData, useQuery } from "@tanstack/react-query"
import { useCallback, useEffect, useRef, useState } from "react"
import { api, errorMessage, seg, uploadFile } from "../api.ts"
import { apiQuery } from "../query.ts"
import {
  type ListedDocument,
  type PageOfDocuments,
  pageOfDocumentsPath,
  pollWhileParsing,
} from "./DocumentRows.tsx"

const SEARCH_DELAY_MS = 300

/** What is under way, or went wrong, for one listed document. */
export interface RowState {
  /** The fraction of a replacement file sent so far, while it is being sent. */
  readonly replacing?: number
  readonly busy?: string
  readonly error?: string
}

/** What a confirmation dialog is asked for: one document's deletion, or an action on the selection. */
export type Confirming =
  | { readonly kind: "delete"; readonly document: ListedDocument }
  | { readonly kind: "bulk"; readonly action: "delete" | "archive"; readonly ids: ReadonlyArray<string> }

/** `value`, once it has stayed the same for `delay` ms. */
function useDebounced<T>(value: T, delay: number): T {
  const [settled, setSettled] = useState(value)
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delay)
    return () => clearTimeout(timer)
  }, [value, delay])
  return settled
}

/**
 * The page of documents on screen: the name search (debounced), the status filter, the page size and the
 * offset (back to the first page when a filter changes), and the query that reads it.
 */
export function useDocumentPage(base: string, onChanged: (() => void) | undefined) {
  const [search, setSearch] = useState("")
  const [status, setStatus] = useState<DocumentStatus | "">("")
  const [pageSize, setPageSize] = useState<number>(25)
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

  const filtering = searched !== "" || status !== ""
  return {
    search,
    setSearch,
    status,
    setStatus,
    pageSize,
    setPageSize,
    offset,
    setOffset,
    documents,
    page,
    filtering,
  }
}

export type DocumentPage = ReturnType<typeof useDocumentPage>

/** A set of document ids (the selection, the messages whose attachments are shown). */
export function useIdSet() {
  const [ids, setIds] = useState<ReadonlySet<string>>(new Set())
  const toggle = useCallback(
    (id: string, on: boolean) =>
      setIds((all) => {
        const next = new Set(all)
        if (on) next.add(id)
        else next.delete(id)
        return next
      }),
    [],
  )
  const flip = useCallback(
    (id: string) =>
      setIds((all) => {
        const next = new Set(all)
        if (next.has(id)) next.delete(id)
        else next.add(id)
        return next
      }),
    [],
  )
  return { ids, setIds, toggle, flip }
}

/** The confirmation dialog: what it asks for, whether its action runs, and why it failed. */
export function useConfirmation() {
  const [confirming, setConfirming] = useState<Confirming | null>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>(undefined)
  /** Each question's number: its dialog's key (see `ConfirmDialog`). */
  const [asked, setAsked] = useState(0)
  const ask = (c: Confirming) => {
    setError(undefined)
    setAsked((n) => n + 1)
    setConfirming(c)
  }
  /** Runs the confirmed action; the dialog closes when it succeeds and shows its error when not. */
  const run = async (action: (c: Confirming) => Promise<void>) => {
    const c = confirming
    if (c === null) return
    setBusy(true)
    setError(undefined)
    try {
      await action(c)
    } catch (e) {
      setError(errorMessage(e))
    } finally {
      setBusy(false)
    }
  }
  return { confirming, setConfirming, busy, error, ask, asked, run }
}

/**
 * What is under way or went wrong for each listed document, and the announcement of the last action:
 * actions that POST, and the replacement of a document's file with its progress.
 */
export function useDocumentRows(base: string, refresh: () => Promise<void>) {
  const [rows, setRows] = useState<Readonly<Record<string, RowState>>>({})
  const [announcement, setAnnouncement] = useState("")

  const setRow = useCallback((id: string, state: RowState) => {
    setRows((all) => ({ ...all, [id]: state }))
  }, [])

  const stillParsing = (d: ListedDocument, what: string) => {
    if (d.status !== "Pending") return false
    setRow(d.id, { error: `${d.file_name} is still being parsed: ${what} once it is Processed or Failed.` })
    return true
  }

  /** A document's action answered by a POST to `…/documents/<id>/<action>/`. */
  const post = async (d: ListedDocument, action: string, busy: string, done: string) => {
    setRow(d.id, { busy })
    try {
      await api.post(`${base}/documents/${seg(d.id)}/${action}/`)
      setRow(d.id, {})
      setAnnouncement(done)
    } catch (e) {
      setRow(d.id, { error: errorMessage(e) })
    }
    await refresh()
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

  return { rows, setRow, announcement, setAnnouncement, stillParsing, post, replace }
}
