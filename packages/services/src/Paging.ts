/**
 * The links of a page envelope (`count`, `next`, `previous`, `results`): `?<filters>&limit=…&offset=…`,
 * keeping the query's filters in the order given, relative to the list's own path.
 */

/** A query parameter of the list: unset (left out of the links) or its value. */
export type PageFilter = readonly [name: string, value: string | number | undefined]

/** `next` when rows follow this page, `previous` when rows come before it (clamped to the count). */
export const pageLinks = (
  filters: ReadonlyArray<PageFilter>,
  page: { readonly count: number; readonly limit: number; readonly offset: number },
): { readonly next: string | null; readonly previous: string | null } => {
  const { count, limit, offset } = page
  const link = (at: number) => {
    const params: Array<readonly [string, string]> = []
    for (const [name, value] of filters) if (value !== undefined) params.push([name, String(value)])
    params.push(["limit", String(limit)], ["offset", String(at)])
    return `?${params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&")}`
  }
  return {
    next: offset + limit < count ? link(offset + limit) : null,
    previous: offset > 0 ? link(Math.max(0, Math.min(offset, count) - limit)) : null,
  }
}
