/**
 * Server state: one TanStack Query client for the application. A query's key is the API path it reads
 * (`["api", path]`), so a write invalidates by path prefix (`invalidateApi("/projects/<id>/")`).
 */
import { keepPreviousData, QueryClient, queryOptions, useQuery } from "@tanstack/react-query"
import { type SetStateAction, useCallback } from "react"
import { api, errorMessage, isApiError } from "./api.ts"
import type { Resource } from "./hooks.ts"

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // a 4xx will not get better by asking again; a network failure (status 0) or a 5xx may
      retry: (failures, error) =>
        failures < 2 && !(isApiError(error) && error.status >= 400 && error.status < 500),
      refetchOnWindowFocus: false,
      staleTime: 2_000,
    },
  },
})

/** The query of a GET of `path` (relative to /api/v1). */
export const apiQuery = <T>(path: string) =>
  queryOptions({ queryKey: ["api", path] as const, queryFn: ({ signal }) => api.get<T>(path, { signal }) })

/** Marks every query whose path starts with `prefix` stale and refetches those on screen. */
export const invalidateApi = (prefix: string): Promise<void> =>
  queryClient.invalidateQueries({
    predicate: (q) =>
      q.queryKey[0] === "api" && typeof q.queryKey[1] === "string" && q.queryKey[1].startsWith(prefix),
  })

/**
 * A GET of `path` as a query, in the shape the screens' sections take (`data`, `error`, `loading`,
 * `reload`, `setData`); `null` reads nothing. Read again whenever a screen using it opens; while another
 * path loads, the last answer stays shown.
 * `refetchInterval` reads it again every so many milliseconds (false: not), or as the last answer says.
 */
export function useApiQuery<T>(
  path: string | null,
  options: { readonly refetchInterval?: number | false | ((data: T | undefined) => number | false) } = {},
): Resource<T> {
  const query = useQuery({
    ...apiQuery<T>(path ?? ""),
    enabled: path !== null,
    placeholderData: keepPreviousData,
    // a screen shows what it last read at once, and reads it again each time it opens
    refetchOnMount: "always",
    refetchInterval: (q) => {
      const every = options.refetchInterval ?? false
      return typeof every === "function" ? every(q.state.data) : every
    },
  })
  const reload = useCallback(async () => {
    if (path !== null) await queryClient.refetchQueries({ queryKey: ["api", path], exact: true })
  }, [path])
  const setData = useCallback(
    (update: SetStateAction<T | undefined>) => {
      if (path !== null) queryClient.setQueryData<T>(["api", path], update as never)
    },
    [path],
  )
  return {
    data: query.data,
    error: query.error ? errorMessage(query.error) : undefined,
    loading: query.isFetching,
    reload,
    setData,
  }
}
