/** Small shared components and formatting helpers. */
import type { ReactNode } from "react"
import type { ResolutionStatus, ResultValue } from "./types.ts"

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
