import { listen } from "./Listen.ts"

/**
 * The channel on which PostgreSQL announces that API keys an API process may keep in memory changed: a
 * key revoked, moved to another organisation or deleted (payload its `key_hash`), or an organisation
 * renamed or deleted (empty payload: every key). The triggers are those of migration
 * `2026_11_30_0001_api_key_notifications`; a key's use (`last_used_at`) notifies nothing.
 */
export const API_KEYS_CHANNEL = "dxs_api_keys"

/**
 * Calls `onChange(keyHash)` (or `onChange(undefined)`: every key) when keys change in any process, on a
 * connection of its own (see `listen`); `onLost` as soon as that connection is lost (changes may be
 * missed until it is back) and `onReconnect` once it listens again. Resolves once listening; the returned
 * function stops it.
 */
export const listenForApiKeys = (
  url: string,
  handlers: {
    readonly onChange: (keyHash: string | undefined) => void
    readonly onLost: () => void
    readonly onReconnect: () => void
  },
): Promise<() => Promise<void>> =>
  listen(url, API_KEYS_CHANNEL, {
    onNotify: (payload) => handlers.onChange(payload === "" ? undefined : payload),
    onLost: handlers.onLost,
    onReconnect: handlers.onReconnect,
  })
