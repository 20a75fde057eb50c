import type { ApiKey, NewApiKey } from "@dxs/domain/Records"
import { useMutation } from "@tanstack/react-query"
import { type FormEvent, useState } from "react"
import { api, errorMessage, seg } from "../api.ts"
import { ErrorAlert, formatDate, Loading, useConfirm, VisuallyHidden } from "../components.tsx"
import { useClipboard } from "../hooks.ts"
import { useApiQuery } from "../query.ts"
import { useTitle } from "../router.tsx"
import { WebhooksSection } from "../WebhooksSection.tsx"

/**
 * `/developer`: the organisation's API keys — create and rotate (the new key is shown once), revoke —
 * and its webhook subscriptions.
 */
export function DeveloperScreen() {
  useTitle("Developer")
  const keys = useApiQuery<ReadonlyArray<ApiKey>>("/keys/")
  const [name, setName] = useState("")
  const [created, setCreated] = useState<{ readonly key: NewApiKey; readonly rotated: boolean } | undefined>(
    undefined,
  )
  const [error, setError] = useState<string | undefined>(undefined)
  const { copied, copy, reset: resetCopied } = useClipboard()

  const createKey = useMutation({
    mutationFn: (keyName: string) => api.post<NewApiKey>("/keys/", { name: keyName }),
    onMutate: () => {
      setError(undefined)
      resetCopied()
    },
    onSuccess: async (key) => {
      setCreated({ key, rotated: false })
      setName("")
      await keys.reload()
    },
    onError: (err) => setError(errorMessage(err)),
  })
  const busy = createKey.isPending

  // revoke or rotate a key; `revoking` is the id of the key being revoked or rotated
  const keyAction = useMutation({
    mutationFn: async ({ key, action }: { readonly key: ApiKey; readonly action: "revoke" | "rotate" }) =>
      action === "revoke"
        ? api.del(`/keys/${seg(key.id)}/`).then(() => undefined)
        : api.post<NewApiKey>(`/keys/${seg(key.id)}/rotate/`),
    onMutate: ({ action }) => {
      setError(undefined)
      if (action === "rotate") resetCopied()
    },
    onSuccess: async (next) => {
      if (next !== undefined) setCreated({ key: next, rotated: true })
      await keys.reload()
    },
    onError: (err) => setError(errorMessage(err)),
  })
  const revoking = keyAction.isPending ? keyAction.variables?.key.id : undefined

  const create = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    createKey.mutate(name.trim())
  }
  const confirm = useConfirm()
  const revoke = (key: ApiKey) =>
    confirm.ask({
      thing: "API key",
      name: key.name || key.prefix,
      verb: "Revoke",
      details: <p>Programs using this key are refused from then on. This cannot be undone.</p>,
      action: () => keyAction.mutateAsync({ key, action: "revoke" }).then(() => undefined),
    })
  const rotate = (key: ApiKey) => keyAction.mutateAsync({ key, action: "rotate" }).catch(() => undefined)

  return (
    <>
      <h1>Developer</h1>
      <p className="lead">
        API keys let programs use the REST API (header <code>X-API-Key</code>). See the{" "}
        <a href="/api/v1/docs">API documentation</a>.
      </p>

      <section aria-labelledby="new-key-heading" className="section">
        <h2 id="new-key-heading">Create an API key</h2>
        <form className="inline-form" onSubmit={create}>
          <div className="field">
            <label htmlFor="key-name">Key name</label>
            <input id="key-name" name="name" value={name} onChange={(e) => setName(e.target.value)} />
          </div>
          <button type="submit" disabled={busy}>
            Create key
          </button>
        </form>
        {created && (
          <NewKeyNote created={created} copied={copied} onCopy={() => void copy(created.key.key)} />
        )}
        <ErrorAlert message={error} />
      </section>

      <section aria-labelledby="keys-heading" className="section">
        <h2 id="keys-heading">API keys</h2>
        <ErrorAlert message={keys.error} />
        {keys.data === undefined ? (
          keys.error ? null : (
            <Loading what="keys" />
          )
        ) : keys.data.length === 0 ? (
          <p className="muted">No API keys yet.</p>
        ) : (
          <KeysTable
            keys={keys.data}
            busyKeyId={revoking}
            onRotate={(k) => void rotate(k)}
            onRevoke={revoke}
          />
        )}
      </section>

      <WebhooksSection />
      {confirm.dialog}
    </>
  )
}

/** The organisation's keys, each with its dates and, unless revoked, Rotate and Revoke. */
function KeysTable({
  keys,
  busyKeyId,
  onRotate,
  onRevoke,
}: {
  readonly keys: ReadonlyArray<ApiKey>
  /** The key being revoked or rotated, if any. */
  readonly busyKeyId: string | undefined
  readonly onRotate: (key: ApiKey) => void
  readonly onRevoke: (key: ApiKey) => void
}) {
  return (
    <div className="table-wrap">
      <table className="data-table">
        <caption className="visually-hidden">API keys</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Revoked</th>
            <th scope="col">
              <VisuallyHidden>Actions</VisuallyHidden>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr key={k.id} data-key-id={k.id} className={k.revoked_at ? "revoked" : undefined}>
              <td>{k.name || <span className="muted">(no name)</span>}</td>
              <td>
                <code>{k.prefix}</code>
              </td>
              <td>{formatDate(k.created_at)}</td>
              <td>{formatDate(k.last_used_at, "Never")}</td>
              <td>{k.revoked_at ? formatDate(k.revoked_at) : "No"}</td>
              <td>
                {k.revoked_at ? null : (
                  <span className="row-actions">
                    <button
                      type="button"
                      className="secondary compact"
                      disabled={busyKeyId === k.id}
                      onClick={() => onRotate(k)}
                    >
                      Rotate<VisuallyHidden> {k.name || k.prefix}</VisuallyHidden>
                    </button>
                    <button
                      type="button"
                      className="danger"
                      disabled={busyKeyId === k.id}
                      onClick={() => onRevoke(k)}
                    >
                      Revoke<VisuallyHidden> {k.name || k.prefix}</VisuallyHidden>
                    </button>
                  </span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

/** A key just created or rotated: shown once, with a button that copies it. */
function NewKeyNote({
  created,
  copied,
  onCopy,
}: {
  readonly created: { readonly key: NewApiKey; readonly rotated: boolean }
  readonly copied: boolean
  readonly onCopy: () => void
}) {
  return (
    <div className="card new-key" role="status">
      <p>
        <strong>Your new key{created.key.name ? ` “${created.key.name}”` : ""}:</strong>
      </p>
      <p className="key-line">
        <code data-testid="new-key">{created.key.key}</code>
        <button type="button" className="secondary" onClick={onCopy}>
          {copied ? "Copied" : "Copy"}
        </button>
      </p>
      {created.rotated && (
        <p className="note" data-testid="rotated-note">
          It replaces the rotated key, which is revoked and no longer works: update the programs that used it.
        </p>
      )}
      <p className="note">
        It is shown once: copy it now and keep it somewhere safe. It cannot be displayed again.
      </p>
    </div>
  )
}
