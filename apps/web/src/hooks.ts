import { useMutation } from "@tanstack/react-query"
import { type Dispatch, type SetStateAction, useCallback, useEffect, useRef, useState } from "react"
import { api, errorMessage } from "./api.ts"

export interface Resource<T> {
  /** The last answer (kept while reloading). */
  readonly data: T | undefined
  /** The message of the last failed load, if the last load failed. */
  readonly error: string | undefined
  readonly loading: boolean
  /** Load again; resolves once the new answer (or error) is in. */
  readonly reload: () => Promise<void>
  /** Replace the data shown (a value, or an update of the current one) until the next load. */
  readonly setData: Dispatch<SetStateAction<T | undefined>>
}

/** GET `path` on mount and whenever it changes; `null` loads nothing. Answers of stale paths are dropped. */
export function useResource<T>(path: string | null): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined)
  const [error, setError] = useState<string | undefined>(undefined)
  const [loading, setLoading] = useState(path !== null)
  const current = useRef(path)
  current.current = path

  const reload = useCallback(async () => {
    if (path === null) return
    setLoading(true)
    try {
      const answer = await api.get<T>(path)
      if (current.current !== path) return
      setData(answer)
      setError(undefined)
    } catch (e) {
      if (current.current !== path) return
      setError(errorMessage(e))
    } finally {
      if (current.current === path) setLoading(false)
    }
  }, [path])

  useEffect(() => {
    void reload()
  }, [reload])

  return { data, error, loading, reload, setData }
}

/**
 * One action at a time on a piece of the screen, as a mutation: `run` marks it busy, clears the last
 * error, and keeps the action's failure as `error` for the screen to show.
 */
export function useAction(): {
  readonly busy: boolean
  readonly error: string | undefined
  readonly run: (action: () => Promise<void>) => Promise<void>
} {
  const { isPending, error, mutateAsync } = useMutation({
    mutationFn: (action: () => Promise<void>) => action(),
  })
  const run = useCallback(
    (action: () => Promise<void>) => mutateAsync(action).catch(() => undefined),
    [mutateAsync],
  )
  return { busy: isPending, error: error ? errorMessage(error) : undefined, run }
}

/** Call `tick` every `ms` milliseconds while `active` (the next call waits for the previous one). */
export function usePolling(active: boolean, ms: number, tick: () => Promise<unknown>): void {
  const latest = useRef(tick)
  latest.current = tick
  useEffect(() => {
    if (!active) return
    let cancelled = false
    let timer: ReturnType<typeof setTimeout> | undefined
    const run = async () => {
      try {
        await latest.current()
      } catch {
        // the tick reports its own errors
      }
      if (!cancelled) timer = setTimeout(run, ms)
    }
    timer = setTimeout(run, ms)
    return () => {
      cancelled = true
      if (timer !== undefined) clearTimeout(timer)
    }
  }, [active, ms])
}

/** Copying a secret that is shown once: `copied` says whether the last copy worked; `reset` for a new one. */
export const useClipboard = () => {
  const [copied, setCopied] = useState(false)
  const copy = useCallback(async (text: string) => {
    try {
      await navigator.clipboard.writeText(text)
      setCopied(true)
    } catch {
      setCopied(false)
    }
  }, [])
  const reset = useCallback(() => setCopied(false), [])
  return { copied, copy, reset }
}
