/** The dimensions of a project (the axes that split an agent's output) and a form to create a custom one. */

import type { DimensionSource } from "@dxs/domain/Enums"
import type { Dimension } from "@dxs/domain/Records"
import { useMutation } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import { api, errorMessage, fieldErrorsOf } from "../api.ts"
import { ErrorAlert, Loading } from "../components.tsx"
import type { Resource } from "../hooks.ts"

export const dimensionSourceLabel = (source: DimensionSource): string =>
  source === "CUSTOM" ? "Custom" : source === "DOCUMENT" ? "Documents (system)" : "Document tag (system)"

export function DimensionsSection({
  base,
  dimensions,
  onCreated,
}: {
  readonly base: string
  readonly dimensions: Resource<ReadonlyArray<Dimension>>
  readonly onCreated?: (dimension: Dimension) => void
}) {
  const [name, setName] = useState("")
  const [description, setDescription] = useState("")
  const [examples, setExamples] = useState("")
  const [autoAttach, setAutoAttach] = useState(false)
  const createDimension = useMutation({
    mutationFn: () =>
      api.post<Dimension>(`${base}/dimensions/`, {
        name: name.trim(),
        description,
        example_values: examples,
        auto_attach_to_new_agents: autoAttach,
      }),
    onSuccess: async (dimension) => {
      setName("")
      setDescription("")
      setExamples("")
      setAutoAttach(false)
      await dimensions.reload()
      onCreated?.(dimension)
    },
  })
  const busy = createDimension.isPending
  const error = createDimension.error ? errorMessage(createDimension.error) : undefined
  const fieldErrors = createDimension.error ? fieldErrorsOf(createDimension.error) : {}

  const create = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    createDimension.mutate()
  }

  const list = dimensions.data ?? []

  return (
    <section aria-labelledby="dimensions-heading" className="section">
      <h2 id="dimensions-heading">Dimensions</h2>
      <p className="muted small">
        A dimension splits an agent's value into one value per dimension value (per region, per year, per
        document…). Attach dimensions to an agent in its editor.
      </p>
      <ErrorAlert message={dimensions.error} />
      {dimensions.data === undefined ? (
        dimensions.error ? null : (
          <Loading what="dimensions" />
        )
      ) : list.length === 0 ? (
        <p className="muted">No dimensions yet.</p>
      ) : (
        <div className="table-wrap">
          <table className="data-table" data-testid="dimensions-table">
            <caption className="visually-hidden">Dimensions</caption>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Source</th>
                <th scope="col">Description</th>
                <th scope="col">Example values</th>
              </tr>
            </thead>
            <tbody>
              {list.map((d) => (
                <tr key={d.id} data-dimension-id={d.id} data-source={d.source}>
                  <td>{d.name}</td>
                  <td>{dimensionSourceLabel(d.source)}</td>
                  <td className="instructions">{d.description || <span className="muted">—</span>}</td>
                  <td>{d.example_values || <span className="muted">—</span>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      <h3>New dimension</h3>
      <form className="stack agent-form" onSubmit={create}>
        <div className="field">
          <label htmlFor="dimension-name">Dimension name</label>
          <input
            id="dimension-name"
            name="name"
            required
            value={name}
            aria-invalid={fieldErrors.name ? true : undefined}
            aria-describedby={fieldErrors.name ? "dimension-name-error" : undefined}
            onChange={(e) => setName(e.target.value)}
          />
          <FieldError id="dimension-name-error" message={fieldErrors.name} />
        </div>
        <div className="field">
          <label htmlFor="dimension-description">Dimension description</label>
          <textarea
            id="dimension-description"
            name="description"
            rows={2}
            value={description}
            onChange={(e) => setDescription(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="dimension-examples">Example values</label>
          <input
            id="dimension-examples"
            name="example_values"
            value={examples}
            aria-describedby="dimension-examples-hint"
            onChange={(e) => setExamples(e.target.value)}
          />
          <span id="dimension-examples-hint" className="muted small">
            Comma-separated, e.g. EU, US, APAC
          </span>
        </div>
        <div className="check-field">
          <input
            id="dimension-auto-attach"
            type="checkbox"
            checked={autoAttach}
            onChange={(e) => setAutoAttach(e.target.checked)}
          />
          <label htmlFor="dimension-auto-attach">Attach to every agent created from now on</label>
        </div>
        <ErrorAlert message={error} />
        <div>
          <button type="submit" disabled={busy || name.trim() === ""}>
            Create dimension
          </button>
        </div>
      </form>
    </section>
  )
}

/** A field's error message (referenced by the field's aria-describedby). */
export function FieldError({ id, message }: { readonly id: string; readonly message: string | undefined }) {
  if (!message) return null
  return (
    <span id={id} className="field-error">
      {message}
    </span>
  )
}
