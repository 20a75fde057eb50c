/**
 * `/projects/:projectId/runs/:runNumber/changes`: what a run changed (`GET …/runs/{number}/changes/`), the
 * values that differ from those before it for the same agent and combination of dimension values, side by
 * side (before, after) with their statuses and citations, each citation a link to the cited page. Paged
 * (`?offset=`).
 */
import type { RunChangeSide, RunChangesPage } from "@dxs/domain/contract/Run"
import type { Project } from "@dxs/domain/Records"
import { seg } from "../api.ts"
import {
  ErrorAlert,
  formatValue,
  Loading,
  ProjectBreadcrumb,
  pluralize,
  StatusBadge,
} from "../components.tsx"
import { useApiQuery } from "../query.ts"
import { Link, navigate, projectReturnHref, useQueryString, useTitle } from "../router.tsx"

const PAGE_ROWS = 50

export function RunChangesScreen({
  projectId,
  runNumber,
}: {
  readonly projectId: string
  readonly runNumber: string
}) {
  const base = `/projects/${seg(projectId)}`
  const query = useQueryString()
  const asked = Number(query.get("offset"))
  const offset = Number.isInteger(asked) && asked > 0 ? asked : 0
  const project = useApiQuery<Project>(`${base}/`)
  const changes = useApiQuery<RunChangesPage>(
    `${base}/runs/${seg(runNumber)}/changes/?limit=${PAGE_ROWS}${offset > 0 ? `&offset=${offset}` : ""}`,
  )
  const projectHref = projectReturnHref(projectId)
  useTitle(`What changed in run ${runNumber}`)

  const breadcrumb = (
    <ProjectBreadcrumb href={projectHref} name={project.data?.name} current={`Run ${runNumber}`} />
  )
  const page = changes.data
  const toOffset = (at: number) =>
    navigate(`${window.location.pathname}${at > 0 ? `?offset=${at}` : ""}`, { replace: true })

  return (
    <>
      {breadcrumb}
      <h1>What changed in run {runNumber}</h1>
      <ErrorAlert message={changes.error} />
      {page === undefined ? (
        changes.error ? null : (
          <Loading what="the changes" />
        )
      ) : (
        <>
          <p className="lead" data-testid="changes-summary">
            {page.previous_run_number === null
              ? "This is the project's first run: there is nothing before it to compare with."
              : page.count === 0
                ? `No value differs from those before it (run ${page.previous_run_number}).`
                : `${pluralize(page.count, "value")} differ from those before it (run ${page.previous_run_number}).`}
          </p>
          {page.results.length > 0 && (
            <div className="table-wrap">
              <table className="data-table changes-table" data-testid="changes-table">
                <caption className="visually-hidden">
                  Values that run {runNumber} changed, before and after
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Agent</th>
                    <th scope="col">Row</th>
                    <th scope="col">Before</th>
                    <th scope="col">After</th>
                  </tr>
                </thead>
                <tbody>
                  {page.results.map((c) => (
                    <tr key={`${c.agent_id}/${c.atomic_value_id}`} data-agent-id={c.agent_id}>
                      <td>{c.agent_name}</td>
                      <th scope="row">
                        {c.resolution_result_id === null ? (
                          c.result_name
                        ) : (
                          <Link href={`${base}/agents/${seg(c.agent_id)}/${seg(c.resolution_result_id)}`}>
                            {c.result_name}
                          </Link>
                        )}
                      </th>
                      <td className="change-cell" data-testid="before">
                        <ChangeSide base={base} side={c.previous} />
                      </td>
                      <td className="change-cell" data-testid="after">
                        <ChangeSide base={base} side={c.current} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {(page.previous !== null || page.next !== null) && (
            <div className="grid-paging">
              <button
                type="button"
                disabled={page.previous === null}
                onClick={() => toOffset(Math.max(0, offset - PAGE_ROWS))}
              >
                Previous
              </button>
              <span aria-live="polite">
                {offset + 1}–{offset + page.results.length} of {page.count}
              </span>
              <button
                type="button"
                disabled={page.next === null}
                onClick={() => toOffset(offset + PAGE_ROWS)}
              >
                Next
              </button>
            </div>
          )}
        </>
      )}
      <p>
        <Link href={projectHref}>Back to project</Link>
      </p>
    </>
  )
}

/** One side of a change: the value, its status, and its citations as links to the cited pages. */
function ChangeSide({ base, side }: { readonly base: string; readonly side: typeof RunChangeSide.Type }) {
  const cited = new Set(side.sources.map((s) => `${s.document_name}\u0000${s.page_number}`))
  // references the sources do not name (web sources): named without a link
  const others = Object.values(side.references).filter(
    ([name, pageNumber]) => pageNumber === null || !cited.has(`${name}\u0000${pageNumber}`),
  )
  return (
    <>
      <span className="change-value">{formatValue(side.value)}</span>{" "}
      <StatusBadge status={side.resolution_status as Parameters<typeof StatusBadge>[0]["status"]} />
      {side.sources.length + others.length > 0 && (
        <ul className="citations" aria-label="Citations">
          {side.sources.map((s) => (
            <li key={`${s.document_id}/${s.page_number}`}>
              <Link href={`${base}/documents/${seg(s.document_id)}?page=${s.page_number}`}>
                {s.document_name}, page {s.page_number}
              </Link>
            </li>
          ))}
          {others.map(([name, pageNumber]) => (
            <li key={`${name}/${pageNumber}`} className="muted small">
              {name}
              {pageNumber === null ? "" : `, page ${pageNumber}`}
            </li>
          ))}
        </ul>
      )}
    </>
  )
}
