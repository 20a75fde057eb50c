/**
 * A tiny history-API router: `usePath` follows `location.pathname`, `navigate` pushes (or replaces) a
 * history entry, `Link` is a real <a href> that navigates on the client, `matchPath` matches patterns
 * such as `/projects/:id`.
 */
import { type AnchorHTMLAttributes, type MouseEvent, useEffect, useSyncExternalStore } from "react"

const listeners = new Set<() => void>()
const notify = () => {
  for (const listener of listeners) listener()
}

if (typeof window !== "undefined") window.addEventListener("popstate", notify)

const subscribe = (listener: () => void) => {
  listeners.add(listener)
  return () => {
    listeners.delete(listener)
  }
}

/** Go to `to` (a same-origin path) without reloading the page. */
export function navigate(to: string, options: { readonly replace?: boolean } = {}): void {
  const current = window.location.pathname + window.location.search + window.location.hash
  if (to === current) return
  if (options.replace) window.history.replaceState(null, "", to)
  else window.history.pushState(null, "", to)
  window.scrollTo(0, 0)
  notify()
}

/** The current path, without a trailing slash (except for `/`). */
export function usePath(): string {
  const path = useSyncExternalStore(
    subscribe,
    () => window.location.pathname,
    () => "/",
  )
  return path.length > 1 ? path.replace(/\/+$/, "") : path
}

/** The parameters of `pattern` (`/projects/:id`) in `path`, or null when it does not match. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split("/").filter(Boolean)
  const have = path.split("/").filter(Boolean)
  if (want.length !== have.length) return null
  const params: Record<string, string> = {}
  for (let i = 0; i < want.length; i++) {
    const w = want[i]!
    const h = have[i]!
    if (w.startsWith(":")) {
      try {
        params[w.slice(1)] = decodeURIComponent(h)
      } catch {
        return null
      }
    } else if (w !== h) return null
  }
  return params
}

export type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { readonly href: string }

/** An <a href> that navigates on the client for plain left clicks (new tabs etc. keep working). */
export function Link({ href, onClick, children, ...rest }: LinkProps) {
  const handleClick = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e)
    if (
      e.defaultPrevented ||
      e.button !== 0 ||
      e.metaKey ||
      e.ctrlKey ||
      e.shiftKey ||
      e.altKey ||
      (rest.target !== undefined && rest.target !== "_self") ||
      rest.download !== undefined
    )
      return
    e.preventDefault()
    navigate(href)
  }
  return (
    <a href={href} onClick={handleClick} {...rest}>
      {children}
    </a>
  )
}

/** Set the document title while a screen is shown. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · dxs` : "dxs"
  }, [title])
}
