/** Small shared components and formatting helpers. */

import type { ResolutionStatus } from "@dxs/domain/Enums"
import type { ResultValue } from "@dxs/domain/Records"
import { type ReactNode, useCallback, useEffect, useId, useRef, useState } from "react"
import { errorMessage } from "./api.ts"
import { Link } from "./router.tsx"
import { confidenceText, isLowConfidence } from "./values.ts"

/** An error for the user (the API's `detail`), announced by screen readers. Renders nothing without one. */
export function ErrorAlert({ message }: { readonly message: string | undefined | null }) {
  if (!message) return null
  return (
    <p role="alert" className="alert">
      {message}
    </p>
  )
}

/** A "Loading…" note. */
export function Loading({ what }: { readonly what?: string }) {
  return <p className="muted">Loading{what ? ` ${what}` : ""}…</p>
}

/** Text only screen readers read. */
export function VisuallyHidden({ children }: { readonly children: ReactNode }) {
  return <span className="visually-hidden">{children}</span>
}

/** A value for display: `—` for none. */
export const formatValue = (value: ResultValue | undefined): string => {
  if (value === null || value === undefined || value === "") return "—"
  if (typeof value === "boolean") return value ? "true" : "false"
  return String(value)
}

const dateFormat = new Intl.DateTimeFormat("en-GB", {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
})

/** A date-time for display, or `fallback` when there is none. */
export const formatDate = (iso: string | null | undefined, fallback = "—"): string => {
  if (!iso) return fallback
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : dateFormat.format(d)
}

/** The CSS class of a resolution status (`status-resolved`, `status-requires-attention`, …). */
export const statusClass = (status: ResolutionStatus | string): string =>
  `status-${status.toLowerCase().replace(/[^a-z]+/g, "-")}`

/** A resolution status as a coloured badge (the text says the status; colour only adds to it). */
export function StatusBadge({ status }: { readonly status: ResolutionStatus }) {
  return (
    <span className={`badge ${statusClass(status)}`} data-status={status}>
      {status}
    </span>
  )
}

export const pluralize = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

/**
 * A modal confirmation. The native <dialog> opened with showModal() is used rather than our own overlay: the
 * browser makes the rest of the page inert, keeps focus inside and cancels on Escape. Focus starts on Cancel
 * (the harmless choice) and returns to the element that opened the dialog when it closes, if that element
 * is still on the page. Give each question its own `key`: the browser tells of a close (Escape) in a task
 * after the dialog is already hidden, and a user quick enough to ask again before it (Escape, then Enter on
 * the button that opened it) would otherwise reuse the closed dialog, which that late close then dismisses.
 * With a key per question the late close reaches only the dialog it closed, unmounted by then.
 */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  busyLabel,
  busy,
  error,
  onConfirm,
  onCancel,
}: {
  readonly title: string
  readonly children: ReactNode
  readonly confirmLabel: string
  readonly busyLabel: string
  readonly busy: boolean
  readonly error: string | undefined
  readonly onConfirm: () => void
  readonly onCancel: () => void
}) {
  const dialog = useRef<HTMLDialogElement>(null)
  const cancel = useRef<HTMLButtonElement>(null)
  const unmounted = useRef(false)
  const titleId = useId()
  const bodyId = useId()

  useEffect(() => {
    const element = dialog.current
    if (!element) return
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null
    unmounted.current = false
    element.showModal()
    cancel.current?.focus()
    return () => {
      unmounted.current = true
      element.close()
      if (opener?.isConnected) opener.focus()
    }
  }, [])

  return (
    <dialog
      ref={dialog}
      className="confirm-dialog"
      aria-labelledby={titleId}
      aria-describedby={bodyId}
      onCancel={(e) => {
        // Escape while the action is under way: the dialog stays to show how it ends.
        if (busy) e.preventDefault()
      }}
      onClose={() => {
        // The browser closed it (Escape): the owner is told, unless it is the one removing it (or, in
        // development's double effects, has opened it again).
        if (!unmounted.current && !dialog.current?.open) onCancel()
      }}
    >
      <h2 id={titleId}>{title}</h2>
      <div id={bodyId}>{children}</div>
      <ErrorAlert message={error} />
      <div className="dialog-actions">
        <button
          type="button"
          className="danger-solid"
          onClick={() => {
            if (!busy) onConfirm()
          }}
        >
          {busy ? busyLabel : confirmLabel}
        </button>
        <button
          ref={cancel}
          type="button"
          className="secondary"
          onClick={() => {
            if (!busy) onCancel()
          }}
        >
          Cancel
        </button>
      </div>
    </dialog>
  )
}

/** What a destructive action asks before it is done. */
export interface ConfirmRequest {
  /** What is removed, as a word: `document`, `agent`, `API key`, `webhook`, `folder`, `project`. */
  readonly thing: string
  /** Its name, quoted in the question. */
  readonly name: string
  /** What the server does beyond removing it, in a sentence or two. */
  readonly details?: ReactNode
  /** The verb, `Delete` unless told (`Revoke` for a key). */
  readonly verb?: string
  /** The action: the dialog stays, busy, until it ends; a failure is shown in it. */
  readonly action: () => Promise<void>
}

/** The question of a destructive action: `Delete document “scan.pdf”?`. */
export const confirmTitle = (r: Pick<ConfirmRequest, "thing" | "name" | "verb">): string =>
  `${r.verb ?? "Delete"} ${r.thing} “${r.name}”?`

/**
 * Every destructive action asks the same way: `ask` opens a `ConfirmDialog` ("Delete <thing> “name”?",
 * Delete and Cancel, the focus on Cancel) that the caller renders as `dialog`.
 */
export function useConfirm(): { readonly ask: (r: ConfirmRequest) => void; readonly dialog: ReactNode } {
  const [request, setRequest] = useState<ConfirmRequest | null>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>(undefined)
  /** Each question's number: its dialog's key (see `ConfirmDialog`). */
  const [asked, setAsked] = useState(0)
  const ask = useCallback((r: ConfirmRequest) => {
    setError(undefined)
    setBusy(false)
    setAsked((n) => n + 1)
    setRequest(r)
  }, [])
  const dialog =
    request === null ? null : (
      <ConfirmDialog
        key={asked}
        title={confirmTitle(request)}
        confirmLabel={request.verb ?? "Delete"}
        busyLabel={`${request.verb === undefined ? "Delet" : request.verb.replace(/e$/, "")}ing…`}
        busy={busy}
        error={error}
        onConfirm={() => {
          setBusy(true)
          setError(undefined)
          request.action().then(
            () => {
              setBusy(false)
              setRequest(null)
            },
            (e: unknown) => {
              setBusy(false)
              setError(errorMessage(e))
            },
          )
        }}
        onCancel={() => setRequest(null)}
      >
        {request.details ?? <p>This cannot be undone.</p>}
      </ConfirmDialog>
    )
  return { ask, dialog }
}

/** A result's confidence beside its value: a small percentage, marked when low. */
export function ConfidenceMark({ confidence }: { readonly confidence: number | null }) {
  const text = confidenceText(confidence)
  if (text === null) return null
  const low = isLowConfidence(confidence)
  return (
    <span
      className={`confidence${low ? " low-confidence" : ""}`}
      data-testid="confidence"
      title={low ? `Low confidence (${text}): worth a look` : `Confidence ${text}`}
    >
      {low ? <span aria-hidden="true">⚠ </span> : null}
      {text}
      <span className="visually-hidden">{low ? " confidence, low" : " confidence"}</span>
    </span>
  )
}

/** An option of a `SelectField`: a value shown as itself, or with a label of its own. */
export type SelectOption = string | number | { readonly value: string; readonly label: string }

/**
 * A labelled select of the filters and page sizes: `any` adds a first option with the empty value (no
 * filter), shown as that text.
 */
export function SelectField({
  id,
  label,
  value,
  options,
  any,
  onChange,
}: {
  readonly id: string
  readonly label: string
  readonly value: string | number
  readonly options: ReadonlyArray<SelectOption>
  readonly any?: string
  readonly onChange: (value: string) => void
}) {
  return (
    <>
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        {any !== undefined && <option value="">{any}</option>}
        {options.map((o) => {
          const { value: v, label: text } = typeof o === "object" ? o : { value: String(o), label: String(o) }
          return (
            <option key={v} value={v}>
              {text}
            </option>
          )
        })}
      </select>
    </>
  )
}

/** Where a screen of a project stands: Projects › the project › this screen. */
export function ProjectBreadcrumb({
  href,
  name,
  current,
}: {
  readonly href: string
  readonly name: string | undefined
  readonly current: ReactNode
}) {
  return (
    <nav aria-label="Breadcrumb" className="breadcrumb">
      <ol>
        <li>
          <Link href="/">Projects</Link>
        </li>
        <li>
          <Link href={href}>{name ?? "Project"}</Link>
        </li>
        <li aria-current="page">{current}</li>
      </ol>
    </nav>
  )
}
