/**
 * "Fill a template": an .xlsx or .docx template with `{{Agent name}}` placeholders (and, in a spreadsheet,
 * header rows of agent and dimension names) filled from the project's results by the server; its state and
 * progress (polled while it runs), the placeholders it could not fill, the download, cancel and clear.
 */
import type { FileEditStatus } from "@dxs/domain/contract/FileEdit"
import { useQuery } from "@tanstack/react-query"
import { type FormEvent, useRef, useState } from "react"
import { API_BASE, api, errorMessage, uploadFile } from "../api.ts"
import { ErrorAlert, formatDate, Loading, pluralize } from "../components.tsx"
import { apiQuery, queryClient } from "../query.ts"

const POLL_MS = 1000

const stateText: Readonly<Record<FileEditStatus["state"], string>> = {
  idle: "No template filled yet.",
  running: "Filling the template…",
  succeeded: "Filled.",
  failed: "Filling failed.",
}

export function FileEditPanel({ base }: { readonly base: string }) {
  const statusPath = `${base}/file-edit/status/`
  const status = useQuery({
    ...apiQuery<FileEditStatus>(statusPath),
    refetchInterval: (query) => (query.state.data?.state === "running" ? POLL_MS : false),
  })
  const input = useRef<HTMLInputElement>(null)
  const [file, setFile] = useState<File | null>(null)
  const [upload, setUpload] = useState<number | null>(null)
  const [error, setError] = useState<string | undefined>(undefined)
  const [busy, setBusy] = useState(false)

  const show = (next: FileEditStatus) => queryClient.setQueryData(["api", statusPath], next)

  const start = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    if (file === null) return
    setError(undefined)
    setUpload(0)
    try {
      show(await uploadFile<FileEditStatus>(`${base}/file-edit/`, file, setUpload))
      setFile(null)
      if (input.current) input.current.value = ""
    } catch (err) {
      setError(errorMessage(err))
    } finally {
      setUpload(null)
    }
  }

  const clear = async () => {
    setBusy(true)
    setError(undefined)
    try {
      await api.del(statusPath)
      await status.refetch()
    } catch (err) {
      setError(errorMessage(err))
    } finally {
      setBusy(false)
    }
  }

  const job = status.data
  const running = job?.state === "running"
  const { completed, total } = job?.progress ?? { completed: 0, total: 0 }

  return (
    <section aria-labelledby="file-edit-heading" className="section" data-testid="file-edit">
      <h2 id="file-edit-heading">Fill a template</h2>
      <p className="muted small">
        Upload an Excel (.xlsx) or Word (.docx) file with placeholders such as{" "}
        <code>{"{{Total amount}}"}</code> or <code>{"{{Total amount | Document=invoice.pdf}}"}</code>; they
        are replaced by the results. In a spreadsheet, a header row of agent and dimension names gets one row
        per combination below it.
      </p>
      <form className="inline-form" onSubmit={start}>
        <div className="field">
          <label htmlFor="file-edit-template">Template (.xlsx or .docx)</label>
          <input
            ref={input}
            id="file-edit-template"
            type="file"
            accept=".xlsx,.docx,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet,application/vnd.openxmlformats-officedocument.wordprocessingml.document"
            onChange={(e) => setFile(e.target.files?.[0] ?? null)}
          />
        </div>
        <div className="file-edit-actions">
          <button type="submit" disabled={file === null || upload !== null || running}>
            {upload !== null ? "Uploading…" : "Fill template"}
          </button>
          {upload !== null && (
            <progress max={100} value={Math.round(upload * 100)} aria-label="Template upload" />
          )}
        </div>
      </form>
      <ErrorAlert message={error} />
      <ErrorAlert message={status.error ? errorMessage(status.error) : undefined} />
      {job === undefined ? (
        status.error ? null : (
          <Loading what="the template's state" />
        )
      ) : (
        <div className="stack">
          <p className="run-status" role="status" data-testid="file-edit-state" data-state={job.state}>
            {stateText[job.state]}
            {job.template_name && <span className="muted"> {job.template_name}</span>}
          </p>
          {running && (
            <div className="run-progress">
              <label htmlFor="file-edit-progress">Filling progress</label>
              <progress
                id="file-edit-progress"
                max={Math.max(total, 1)}
                {...(total === 0 ? {} : { value: completed })}
              />
              <span className="muted small">
                {total === 0 ? "Reading the template…" : `${completed} of ${total}`}
              </span>
            </div>
          )}
          {job.error && <ErrorAlert message={job.error} />}
          {job.finished_at && <p className="muted small">Finished {formatDate(job.finished_at)}</p>}
          {job.problems.length > 0 && (
            <div className="table-wrap">
              <table className="data-table" data-testid="file-edit-problems">
                <caption>{pluralize(job.problems.length, "placeholder")} left as written</caption>
                <thead>
                  <tr>
                    <th scope="col">Placeholder</th>
                    <th scope="col">Where</th>
                    <th scope="col">What to do</th>
                  </tr>
                </thead>
                <tbody>
                  {job.problems.map((p, i) => (
                    <tr key={`${p.location}-${i}`}>
                      <td>
                        <code>{p.placeholder}</code>
                      </td>
                      <td>{p.location}</td>
                      <td>{p.message}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {(job.download_url || job.state !== "idle") && (
            <div className="file-edit-actions">
              {job.download_url && (
                <a className="download-link" href={`${API_BASE}${base}/file-edit/download/`} download>
                  Download filled file
                </a>
              )}
              {job.state !== "idle" && (
                <button type="button" className="secondary" disabled={busy} onClick={() => void clear()}>
                  {running ? "Cancel" : "Clear"}
                </button>
              )}
            </div>
          )}
        </div>
      )}
    </section>
  )
}
