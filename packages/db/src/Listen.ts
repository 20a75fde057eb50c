import pg from "pg"

export interface ListenHandlers {
  /** A notification on the channel, with its payload ("" when none). */
  readonly onNotify: (payload: string) => void
  /**
   * The connection was lost and is listening again: notifications sent meanwhile were missed, so
   * whatever they would have triggered should be done once now.
   */
  readonly onReconnect?: () => void
}

/**
 * Listens on a PostgreSQL NOTIFY channel. LISTEN needs a connection of its own, so this opens a dedicated
 * `pg.Client` (named `dxs listen <channel>` in `pg_stat_activity`); if that connection drops it reconnects
 * (after 1 s, then backing off to 30 s) and calls `onReconnect` once listening again. Resolves once
 * listening (rejects if the first connection fails); the returned function stops it.
 */
export const listen = async (
  url: string,
  channel: string,
  handlers: ListenHandlers,
): Promise<() => Promise<void>> => {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`)
  let stopped = false
  let client: pg.Client | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  let failures = 0

  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: url, application_name: `dxs listen ${channel}` })
    client = c
    let lost = false
    const onLost = () => {
      if (lost) return
      lost = true
      c.end().catch(() => undefined)
      if (stopped) return
      failures += 1
      timer = setTimeout(reconnect, Math.min(30_000, 1_000 * 2 ** (failures - 1)))
    }
    c.on("error", onLost)
    c.on("end", onLost)
    c.on("notification", (n) => {
      if (n.channel === channel && !stopped) handlers.onNotify(n.payload ?? "")
    })
    try {
      await c.connect()
      await c.query(`listen ${channel}`)
    } catch (e) {
      onLost()
      throw e
    }
    failures = 0
  }

  const reconnect = () => {
    timer = undefined
    if (stopped) return
    connect().then(
      () => {
        if (!stopped) handlers.onReconnect?.()
      },
      () => undefined,
    )
  }

  try {
    await connect()
  } catch (e) {
    stopped = true
    if (timer) clearTimeout(timer)
    throw e
  }
  return async () => {
    stopped = true
    if (timer) clearTimeout(timer)
    await client?.end().catch(() => undefined)
  }
}
