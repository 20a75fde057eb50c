/**
 * The screens' view of routing, over TanStack Router (the route tree is in App.tsx): `Link` is a real
 * <a href> that navigates on the client, `navigate` goes to a same-origin path from anywhere, `usePath`
 * is the current path and `useTitle` sets the document title.
 */
import type { AnyRouter } from "@tanstack/react-router"
import { useRouterState } from "@tanstack/react-router"
import { type AnchorHTMLAttributes, type MouseEvent, useEffect, useRef } from "react"

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
 * Go to `to` (a same-origin path, with its query and hash if any) without reloading the page. The position
 * left on another page is kept for `useScrollOnNavigation`.
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
  void current.navigate({ href: to, replace: options.replace === true, resetScroll: false })
}

/** Scroll to `y` now, and again as the page grows (parts still loading) for a few seconds, unless the user scrolls. */
const scrollBackTo = (y: number): (() => void) => {
  const reached = () => {
    window.scrollTo(0, y)
    return Math.abs(window.scrollY - y) < 2
  }
  if (reached()) return () => undefined
  const observer = new ResizeObserver(() => {
    if (reached()) stop()
  })
  const timer = setTimeout(() => stop(), 5000)
  const stop = () => {
    observer.disconnect()
    clearTimeout(timer)
    window.removeEventListener("wheel", stop)
    window.removeEventListener("keydown", stop)
    window.removeEventListener("touchmove", stop)
  }
  observer.observe(document.body)
  window.addEventListener("wheel", stop)
  window.addEventListener("keydown", stop)
  window.addEventListener("touchmove", stop)
  return stop
}

/**
 * The scroll as pages change (the router's own reset is off): another page starts at the top, unless it was
 * left by `navigate` with that same address (Back, or a link back to the same state), which is given its
 * position back. A new query on the same page (a filter, a section) keeps the scroll.
 */
export function useScrollOnNavigation(): void {
  const path = useRouterState({ select: (s) => s.resolvedLocation?.pathname })
  const first = useRef(true)
  useEffect(() => {
    if (path === undefined) return
    if (first.current) {
      first.current = false
      return
    }
    const href = hereHref()
    const saved = scrollPositions.get(href)
    scrollPositions.delete(href)
    if (saved === undefined) {
      window.scrollTo(0, 0)
      return
    }
    return scrollBackTo(saved)
  }, [path])
}

/** Whether the page now shown is given back a scroll position (read as it renders, before it is). */
export const scrollToRestore = (): boolean => scrollPositions.has(hereHref())

/** The last address (path and query) shown of each project's screen. */
const projectHrefs = new Map<string, string>()

/** Remember the project screen's current address (its section and grid state), for links back to it. */
export function useRememberProjectHref(projectId: string): void {
  const href = useRouterState({ select: (s) => s.location.pathname + s.location.searchStr })
  useEffect(() => {
    // the screen still shows for a moment after a navigation to another page: that address is not its own
    if (href.replace(/[?#].*$/, "").replace(/\/+$/, "") === `/projects/${encodeURIComponent(projectId)}`)
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
export function useHeadingFocus(): void {
  // the path once the navigation is done (the new screen rendered), not as it starts
  const path = useRouterState({ select: (s) => s.resolvedLocation?.pathname })
  const first = useRef(true)
  useEffect(() => {
    if (path === undefined) return
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
