/**
 * The developer page's webhooks: the organisation's subscriptions, a form to create one (the signing
 * secret is shown once), a test event, deletion, and each subscription's delivery log.
 */

import type {
  WebhookSubscriptionCreated as NewWebhookSubscription,
  WebhookDeliveriesPage,
  WebhookDelivery,
  WebhookEventRecord as WebhookEventType,
  WebhookSubscription,
} from "@dxs/domain/Records"
import { type FormEvent, useEffect, useRef, useState } from "react"
import { api, seg } from "./api.ts"
import { ErrorAlert, formatDate, Loading, useConfirm, VisuallyHidden } from "./components.tsx"
import { useAction, useClipboard } from "./hooks.ts"
import { useApiQuery } from "./query.ts"

const DELIVERIES_POLL_MS = 2000

/** What a subscription is called in buttons and captions: its name, else its URL. */
const labelOf = (s: WebhookSubscription): string => s.name || s.url

export function WebhooksSection() {
  const subscriptions = useApiQuery<ReadonlyArray<WebhookSubscription>>("/webhooks/")
  const events = useApiQuery<ReadonlyArray<WebhookEventType>>("/webhooks/events/")
  const [name, setName] = useState("")
  const [url, setUrl] = useState("")
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set())
  const [created, setCreated] = useState<NewWebhookSubscription | undefined>(undefined)
  const { copied, copy, reset: resetCopied } = useClipboard()
  const [invalid, setInvalid] = useState<string | undefined>(undefined)
  const { busy, error: createError, run } = useAction()
  const error = invalid ?? createError

  const toggle = (event: string, on: boolean) => {
    const next = new Set(chosen)
    if (on) next.add(event)
    else next.delete(event)
    setChosen(next)
  }

  const create = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setInvalid(undefined)
    resetCopied()
    if (chosen.size === 0) {
      setInvalid("Choose at least one event.")
      return
    }
    await run(async () => {
      // in the order the server lists the events
      const order = (events.data ?? []).map((ev) => ev.name)
      const subscribed = [...chosen].sort((a, b) => order.indexOf(a) - order.indexOf(b))
      const answer = await api.post<NewWebhookSubscription>("/webhooks/", {
        name: name.trim(),
        url: url.trim(),
        subscribed_events: subscribed,
      })
      setCreated(answer)
      setName("")
      setUrl("")
      setChosen(new Set())
      await subscriptions.reload()
    })
  }

  return (
    <section aria-labelledby="webhooks-heading" className="section">
      <h2 id="webhooks-heading">Webhooks</h2>
      <p className="muted">
        Subscriptions receive the organisation's events by HTTPS <code>POST</code>, signed per Standard
        Webhooks with the subscription's secret, and retried for about three days when the endpoint fails.
      </p>

      <h3 id="new-webhook-heading">Create a webhook</h3>
      <form className="card stack webhook-form" aria-labelledby="new-webhook-heading" onSubmit={create}>
        <div className="field">
          <label htmlFor="webhook-name">Webhook name</label>
          <input id="webhook-name" name="name" value={name} onChange={(e) => setName(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="webhook-url">Endpoint URL</label>
          <input
            id="webhook-url"
            name="url"
            type="url"
            required
            inputMode="url"
            placeholder="https://example.com/hooks/dxs"
            aria-describedby="webhook-url-hint"
            value={url}
            onChange={(e) => setUrl(e.target.value)}
          />
          <span id="webhook-url-hint" className="muted small">
            HTTPS only. Events go to public addresses only: an IP address or localhost is checked when you
            save, a host name each time it is resolved for a delivery (private, loopback, link-local and
            metadata addresses are refused then). Loopback, plain http included, only on a server set up for
            development (WEBHOOK_ALLOW_LOOPBACK).
          </span>
        </div>
        <EventChoices events={events} chosen={chosen} onToggle={toggle} />
        <div>
          <button type="submit" disabled={busy}>
            Create webhook
          </button>
        </div>
      </form>
      {created && (
        <NewSecretNote created={created} copied={copied} onCopy={() => void copy(created.secret)} />
      )}
      <ErrorAlert message={error} />

      <h3 id="subscriptions-heading">Subscriptions</h3>
      <ErrorAlert message={subscriptions.error} />
      {subscriptions.data === undefined ? (
        subscriptions.error ? null : (
          <Loading what="webhooks" />
        )
      ) : subscriptions.data.length === 0 ? (
        <p className="muted">No webhooks yet.</p>
      ) : (
        <ul className="webhook-list" aria-labelledby="subscriptions-heading">
          {subscriptions.data.map((s) => (
            <SubscriptionItem key={s.id} subscription={s} onDeleted={() => void subscriptions.reload()} />
          ))}
        </ul>
      )}
    </section>
  )
}

/** The events a subscription may choose, each with its description. */
function EventChoices({
  events,
  chosen,
  onToggle,
}: {
  readonly events: {
    readonly data: ReadonlyArray<WebhookEventType> | undefined
    readonly error: string | undefined
  }
  readonly chosen: ReadonlySet<string>
  readonly onToggle: (event: string, on: boolean) => void
}) {
  return (
    <fieldset className="event-choices">
      <legend>Events</legend>
      <ErrorAlert message={events.error} />
      {events.data === undefined ? (
        events.error ? null : (
          <Loading what="events" />
        )
      ) : (
        events.data.map((ev) => {
          const id = `webhook-event-${ev.name.replace(/[^A-Za-z0-9_-]+/g, "-")}`
          return (
            <div className="checkbox-field" key={ev.name}>
              <input
                id={id}
                type="checkbox"
                name="subscribed_events"
                value={ev.name}
                checked={chosen.has(ev.name)}
                aria-describedby={`${id}-description`}
                onChange={(e) => onToggle(ev.name, e.target.checked)}
              />
              <div>
                <label htmlFor={id}>{ev.name}</label>
                <p id={`${id}-description`} className="muted small hint">
                  {ev.description}
                </p>
              </div>
            </div>
          )
        })
      )}
    </fieldset>
  )
}

/** A new subscription's signing secret: shown once, with a button that copies it. */
function NewSecretNote({
  created,
  copied,
  onCopy,
}: {
  readonly created: NewWebhookSubscription
  readonly copied: boolean
  readonly onCopy: () => void
}) {
  return (
    <div className="card new-key" role="status">
      <p>
        <strong>The signing secret of {created.name ? `“${created.name}”` : "the new webhook"}:</strong>
      </p>
      <p className="key-line">
        <code data-testid="new-webhook-secret">{created.secret}</code>
        <button type="button" className="secondary" onClick={onCopy}>
          {copied ? "Copied" : "Copy"}
        </button>
      </p>
      <p className="note">
        It is shown once: store it where your endpoint verifies the <code>webhook-signature</code> header. It
        cannot be displayed again.
      </p>
    </div>
  )
}

function SubscriptionItem({
  subscription: s,
  onDeleted,
}: {
  readonly subscription: WebhookSubscription
  readonly onDeleted: () => void
}) {
  const label = labelOf(s)
  const { busy, error, run } = useAction()
  const [sent, setSent] = useState(false)
  // bumped by a test event: an open delivery log loads again
  const [refresh, setRefresh] = useState(0)

  const sendTest = async () => {
    setSent(false)
    await run(async () => {
      await api.post(`/webhooks/${seg(s.id)}/test/`)
      setSent(true)
      setRefresh((n) => n + 1)
    })
  }

  const confirm = useConfirm()
  const remove = () =>
    confirm.ask({
      thing: "webhook",
      name: s.name || s.url,
      details: <p>No more events are sent to it, and its delivery log is removed. This cannot be undone.</p>,
      action: async () => {
        await api.del(`/webhooks/${seg(s.id)}/`)
        onDeleted()
      },
    })

  return (
    <li className="card webhook" data-webhook-id={s.id}>
      <h4 className="webhook-name">{s.name || <span className="muted">(no name)</span>}</h4>
      <dl className="facts">
        <dt>URL</dt>
        <dd>
          <code className="webhook-url">{s.url}</code>
        </dd>
        <dt>Events</dt>
        <dd>
          {s.subscribed_events.map((ev, i) => (
            <span key={ev}>
              {i > 0 ? ", " : null}
              <code>{ev}</code>
            </span>
          ))}
        </dd>
        <dt>Active</dt>
        <dd>{s.is_active ? "Yes" : "No"}</dd>
        <dt>Created</dt>
        <dd>{formatDate(s.created_at)}</dd>
      </dl>
      <div className="row-actions">
        <button type="button" className="secondary compact" disabled={busy} onClick={() => void sendTest()}>
          Send test event<VisuallyHidden> {label}</VisuallyHidden>
        </button>
        <button type="button" className="danger" disabled={busy} onClick={remove}>
          Delete<VisuallyHidden> {label}</VisuallyHidden>
        </button>
        {sent && (
          <span role="status" className="saved-note small">
            Test event sent.
          </span>
        )}
      </div>
      <ErrorAlert message={error} />
      <Deliveries subscription={s} refresh={refresh} />
      {confirm.dialog}
    </li>
  )
}

/** The delivery log in a disclosure, loaded when opened (and again while deliveries are pending). */
function Deliveries({
  subscription: s,
  refresh,
}: {
  readonly subscription: WebhookSubscription
  readonly refresh: number
}) {
  const label = labelOf(s)
  const [open, setOpen] = useState(false)
  const page = useApiQuery<WebhookDeliveriesPage>(open ? `/webhooks/${seg(s.id)}/deliveries/` : null, {
    // read again while deliveries are pending
    refetchInterval: (data) =>
      data?.results.some((d) => d.status === "pending") ? DELIVERIES_POLL_MS : false,
  })
  const { reload } = page
  // a test event was sent: load the log again (when open; a closed one loads when opened)
  const handled = useRef(refresh)
  useEffect(() => {
    if (refresh === handled.current) return
    handled.current = refresh
    void reload()
  }, [refresh, reload])

  return (
    <details className="deliveries" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Deliveries of {label}</summary>
      <ErrorAlert message={page.error} />
      {page.data === undefined ? (
        page.error || !open ? null : (
          <Loading what="deliveries" />
        )
      ) : page.data.results.length === 0 ? (
        <p className="muted">No deliveries yet.</p>
      ) : (
        <>
          {page.data.count > page.data.results.length && (
            <p className="muted small">
              The latest {page.data.results.length} of {page.data.count} deliveries.
            </p>
          )}
          <div className="table-wrap">
            <table className="data-table" data-testid="webhook-deliveries">
              <caption className="visually-hidden">Deliveries of {label}</caption>
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="num">
                    Attempts
                  </th>
                  <th scope="col">Last attempt</th>
                  <th scope="col">Response</th>
                </tr>
              </thead>
              <tbody>
                {page.data.results.map((d) => (
                  <DeliveryRow key={d.id} delivery={d} />
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </details>
  )
}

function DeliveryRow({ delivery: d }: { readonly delivery: WebhookDelivery }) {
  const last = d.attempts.reduce<WebhookDelivery["attempts"][number] | undefined>(
    (a, b) => (a === undefined || b.number > a.number ? b : a),
    undefined,
  )
  const code = d.last_status_code ?? last?.status_code ?? null
  const problem = d.last_error ?? last?.error ?? null
  return (
    <tr data-delivery-id={d.id} data-status={d.status}>
      <td>
        <code>{d.event_type}</code>
      </td>
      <td>
        <span className={`delivery-status delivery-${d.status}`}>{d.status}</span>
        {d.status === "pending" && d.next_attempt_at && (
          <span className="muted small block">next try {formatDate(d.next_attempt_at)}</span>
        )}
      </td>
      <td className="num">{d.attempt_count}</td>
      <td>{formatDate(last?.attempted_at ?? d.delivered_at, "Not yet")}</td>
      <td>
        {code === null ? "—" : code}
        {problem && <span className="muted small block">{problem}</span>}
      </td>
    </tr>
  )
}
