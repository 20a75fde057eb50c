/**
 * The screens' view of routing, over TanStack Router (the route tree is in App.tsx): `Link` is a real
 * <a href> that navigates on the client, `navigate` goes to a same-origin path from anywhere, `usePath`
 * is the current path and `useTitle` sets the document title.
 */
import type { AnyRouter } from "@tanstack/react-router"
import { useRouterState } from "@tanstack/react-router"
import { type AnchorHTMLAttributes, type MouseEvent, useEffect, useRef, useState } from "react"

let current: AnyRouter | null = null

/** The application's router, which `navigate` and `Link` drive (set once, when it is made). */
export const bindRouter = (router: AnyRouter): void => {
  current = router
}

/** Scroll positions of the pages left by `navigate`, by path and query: given back on the way back. */
const scrollPositions = new Map<string, number>()
const SCROLL_POSITIONS_KEPT = 50

const hereHref = () => window.location.pathname + window.location.search

/**
 * Go to `to` (a same-origin path, with its query and hash if any) without reloading the page. Another
 * page starts at the top (the position left is kept for `useScrollRestore`); a new query on the same page
 * (a filter, a section) keeps the scroll where it is.
 */
export function navigate(to: string, options: { readonly replace?: boolean } = {}): void {
  const here = hereHref() + window.location.hash
  if (to === here) return
  if (current === null) {
    window.location.assign(to)
    return
  }
  const samePage = new URL(to, window.location.href).pathname === window.location.pathname
  if (!samePage) {
    scrollPositions.delete(hereHref())
    scrollPositions.set(hereHref(), window.scrollY)
    if (scrollPositions.size > SCROLL_POSITIONS_KEPT) {
      const oldest = scrollPositions.keys().next().value
      if (oldest !== undefined) scrollPositions.delete(oldest)
    }
  }
  void current.navigate({ href: to, replace: options.replace === true })
  if (!samePage) window.scrollTo(0, 0)
}

/**
 * Once `ready` (the page's data is in), scroll back to where this page (its path and query) was left by a
 * navigation, if it was: after Back, or a link back to the same state. Parts that load later make the page
 * taller: the position is tried again as it grows, for a few seconds. Says whether there was a position to
 * give back (as the page opened).
 */
export function useScrollRestore(ready: boolean): boolean {
  const href = useRouterState({ select: (s) => s.location.pathname + s.location.searchStr })
  const [saved] = useState(() => scrollPositions.get(href))
  useEffect(() => {
    if (!ready || saved === undefined) return
    scrollPositions.delete(href)
    const reached = () => {
      window.scrollTo(0, saved)
      return Math.abs(window.scrollY - saved) < 2
    }
    if (reached()) return
    const observer = new ResizeObserver(() => {
      if (reached()) observer.disconnect()
    })
    observer.observe(document.body)
    const stop = setTimeout(() => observer.disconnect(), 5000)
    const stopOnUserScroll = () => observer.disconnect()
    window.addEventListener("wheel", stopOnUserScroll, { once: true })
    window.addEventListener("keydown", stopOnUserScroll, { once: true })
    return () => {
      observer.disconnect()
      clearTimeout(stop)
      window.removeEventListener("wheel", stopOnUserScroll)
      window.removeEventListener("keydown", stopOnUserScroll)
    }
    // only as the page opens: `href` and `saved` are those it opened with
  }, [ready, href, saved])
  return saved !== undefined
}

/** The last address (path and query) shown of each project's screen. */
const projectHrefs = new Map<string, string>()

/** Remember the project screen's current address (its section and grid state), for links back to it. */
export function useRememberProjectHref(projectId: string): void {
  const href = useRouterState({ select: (s) => s.location.pathname + s.location.searchStr })
  useEffect(() => {
    projectHrefs.set(projectId, href)
  }, [projectId, href])
}

/** Where "Back to project" goes: the project screen as it was last shown (section, grid state). */
export const projectReturnHref = (projectId: string): string =>
  projectHrefs.get(projectId) ?? `/projects/${encodeURIComponent(projectId)}`

/** The query of the current location (reactive). */
export function useQueryString(): URLSearchParams {
  const search = useRouterState({ select: (s) => s.location.searchStr })
  return new URLSearchParams(search)
}

/** Replace the current location's query (no new history entry, the scroll stays). */
export function replaceQuery(params: URLSearchParams): void {
  const query = params.toString()
  navigate(`${window.location.pathname}${query ? `?${query}` : ""}`, { replace: true })
}

/** The current path, without a trailing slash (except for `/`). */
export function usePath(): string {
  const path = useRouterState({ select: (s) => s.location.pathname })
  return path.length > 1 ? path.replace(/\/+$/, "") : path
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

/**
 * After each navigation to another page (not a new query on the same one), the focus goes to the new
 * screen's h1 once it is shown, so that screen readers start there; the first page keeps the browser's.
 */
export function useHeadingFocus(path: string): void {
  const first = useRef(true)
  useEffect(() => {
    if (first.current) {
      first.current = false
      return
    }
    const focusHeading = (): boolean => {
      const h1 = document.querySelector<HTMLElement>("#main h1")
      if (h1 === null) return false
      if (!h1.hasAttribute("tabindex")) h1.setAttribute("tabindex", "-1")
      h1.focus({ preventScroll: true })
      return true
    }
    if (focusHeading()) return
    // the screen is still loading: its heading comes with its data
    const observer = new MutationObserver(() => {
      if (focusHeading()) observer.disconnect()
    })
    observer.observe(document.body, { childList: true, subtree: true })
    const stop = setTimeout(() => observer.disconnect(), 30_000)
    return () => {
      observer.disconnect()
      clearTimeout(stop)
    }
  }, [path])
}

/** Set the document title while a screen is shown. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · dxs` : "dxs"
  }, [title])
}
