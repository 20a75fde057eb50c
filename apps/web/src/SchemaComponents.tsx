/** Parts of the output schema screen: the diagnostics table and JSON with `*_service_url` links. */

import type { Diagnostic as MappingDiagnostic } from "@dxs/domain/Records"
import { Fragment, type MouseEvent, type ReactNode } from "react"
import { navigate } from "./router.tsx"

/** Mapping diagnostics (or a refused request's field errors) as a table captioned "Diagnostics". */
export function DiagnosticsTable({
  diagnostics,
}: {
  readonly diagnostics: ReadonlyArray<MappingDiagnostic>
}) {
  if (diagnostics.length === 0) return <p className="muted">No diagnostics.</p>
  return (
    <div className="table-wrap">
      <table className="data-table diagnostics" data-testid="schema-diagnostics">
        <caption className="visually-hidden">Diagnostics</caption>
        <thead>
          <tr>
            <th scope="col">Path</th>
            <th scope="col">Severity</th>
            <th scope="col">Code</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {diagnostics.map((d) => (
            <tr key={`${d.path}\u0000${d.code}\u0000${d.message}`} data-severity={d.severity}>
              <td>{d.path === "" ? <span className="muted">(root)</span> : <code>{d.path}</code>}</td>
              <td>
                <span className={`badge severity-${d.severity}`}>{d.severity}</span>
              </td>
              <td>{d.code ? <code>{d.code}</code> : "—"}</td>
              <td>{d.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

const SERVICE_URL_SUFFIX = "_service_url"

/**
 * `value` pretty-printed as `JSON.stringify(value, null, 2)` does, with every string under a
 * `*_service_url` key as a link (its text the URL itself).
 */
export function JsonWithLinks({ value }: { readonly value: unknown }) {
  return <>{renderJson(value, "", undefined, "$")}</>
}

const isPlainObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

function renderJson(value: unknown, indent: string, key: string | undefined, path: string): ReactNode {
  const inner = `${indent}  `
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]"
    const items: Array<ReactNode> = []
    for (let i = 0; i < value.length; i++) {
      const itemPath = `${path}[${i}]`
      items.push(
        <Fragment key={itemPath}>
          {inner}
          {renderJson(value[i], inner, undefined, itemPath)}
          {i < value.length - 1 ? ",\n" : "\n"}
        </Fragment>,
      )
    }
    return (
      <>
        {"[\n"}
        {items}
        {indent}]
      </>
    )
  }
  if (isPlainObject(value)) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined)
    if (entries.length === 0) return "{}"
    return (
      <>
        {"{\n"}
        {entries.map(([k, v], i) => (
          <Fragment key={k}>
            {inner}
            {JSON.stringify(k)}: {renderJson(v, inner, k, `${path}.${k}`)}
            {i < entries.length - 1 ? ",\n" : "\n"}
          </Fragment>
        ))}
        {indent}
        {"}"}
      </>
    )
  }
  if (typeof value === "string" && key?.endsWith(SERVICE_URL_SUFFIX))
    return (
      <>
        {'"'}
        <ServiceLink url={value} />
        {'"'}
      </>
    )
  return JSON.stringify(value) ?? "null"
}

/** This origin's path of `url` when it is a page of this application under `/projects/`, else undefined. */
const localProjectPath = (url: string): string | undefined => {
  try {
    const u = new URL(url, window.location.href)
    if (u.origin !== window.location.origin || !u.pathname.startsWith("/projects/")) return undefined
    return u.pathname + u.search + u.hash
  } catch {
    return undefined
  }
}

/** A deep link into the application: navigates on the client when it points to this origin's project pages. */
function ServiceLink({ url }: { readonly url: string }) {
  const local = localProjectPath(url)
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (local === undefined || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
    e.preventDefault()
    navigate(local)
  }
  return (
    <a href={url} onClick={onClick} className="service-url">
      {url}
    </a>
  )
}
