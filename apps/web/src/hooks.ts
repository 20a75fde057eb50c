import { useMutation } from "@tanstack/react-query"
import { type Dispatch, type SetStateAction, useCallback, useState } from "react"
import { errorMessage } from "./api.ts"

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
