/**
 * The screens' view of routing, over TanStack Router (the route tree is in App.tsx): `Link` is a real
 * <a href> that navigates on the client, `navigate` goes to a same-origin path from anywhere, `usePath`
 * is the current path and `useTitle` sets the document title.
 */
import type { AnyRouter } from "@tanstack/react-router"
import { useRouterState } from "@tanstack/react-router"
import { type AnchorHTMLAttributes, type MouseEvent, useEffect } from "react"

let current: AnyRouter | null = null

/** The application's router, which `navigate` and `Link` drive (set once, when it is made). */
export const bindRouter = (router: AnyRouter): void => {
  current = router
}

/** Go to `to` (a same-origin path, with its query and hash if any) without reloading the page. */
export function navigate(to: string, options: { readonly replace?: boolean } = {}): void {
  const here = window.location.pathname + window.location.search + window.location.hash
  if (to === here) return
  if (current === null) {
    window.location.assign(to)
    return
  }
  void current.navigate({ href: to, replace: options.replace === true })
  window.scrollTo(0, 0)
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

/** Set the document title while a screen is shown. */
export function useTitle(title: string): void {
  useEffect(() => {
    document.title = title ? `${title} · dxs` : "dxs"
  }, [title])
}
