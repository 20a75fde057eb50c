/**
 * The REST API client: same origin, the session cookie, the session's CSRF token on every write,
 * problem+json errors as `ApiError`, and a 401 (outside sign-in) handed to the application to go to
 * the sign-in page.
 */

export const API_BASE = "/api/v1"

export interface FieldError {
  readonly path: string
  readonly message: string
}

/**
 * An error answer of the API (RFC 9457 problem+json), or a network failure (status 0): a plain value that
 * callers recognise by its `_tag` (`isApiError`), rejected by every request.
 */
export interface ApiError {
  readonly _tag: "ApiError"
  readonly status: number
  readonly title: string
  readonly detail: string
  readonly errors: ReadonlyArray<FieldError>
  readonly body: Readonly<Record<string, unknown>>
}

export const apiError = (
  status: number,
  title: string,
  detail: string,
  errors: ReadonlyArray<FieldError> = [],
  body: Readonly<Record<string, unknown>> = {},
): ApiError => ({ _tag: "ApiError", status, title, detail, errors, body })

export const isApiError = (e: unknown): e is ApiError =>
  typeof e === "object" && e !== null && (e as { readonly _tag?: unknown })._tag === "ApiError"

let csrfToken: string | null = null
let onUnauthorized: (() => void) | null = null

/** Remember the session's CSRF token (sent as X-CSRF-Token on every write); null after sign-out. */
export const setCsrfToken = (token: string | null): void => {
  csrfToken = token
}

/** What to do when the API answers 401 to anything but a sign-in attempt. */
export const setUnauthorizedHandler = (handler: (() => void) | null): void => {
  onUnauthorized = handler
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

const toFieldErrors = (u: unknown): ReadonlyArray<FieldError> =>
  Array.isArray(u)
    ? u.filter(isRecord).map((e) => ({ path: String(e.path ?? ""), message: String(e.message ?? "") }))
    : []

/** An ApiError from a status and the raw text of an error answer. */
export const problemFromText = (status: number, statusText: string, text: string): ApiError => {
  let body: unknown
  try {
    body = text ? JSON.parse(text) : undefined
  } catch {
    body = undefined
  }
  if (isRecord(body)) {
    const title = typeof body.title === "string" ? body.title : statusText || "Error"
    const detail =
      typeof body.detail === "string" && body.detail !== "" ? body.detail : `${title} (${status})`
    return apiError(status, title, detail, toFieldErrors(body.errors), body)
  }
  const title = statusText || "Error"
  return apiError(status, title, `The server answered ${status}${statusText ? ` ${statusText}` : ""}.`)
}

const isSignIn = (path: string) => path.startsWith("/auth/sign-in")

const handleUnauthorized = (status: number, path: string) => {
  if (status === 401 && !isSignIn(path)) onUnauthorized?.()
}

/** A request to `/api/v1${path}`; the parsed JSON answer, or undefined for an empty one. */
export async function request<T>(
  method: string,
  path: string,
  body?: unknown,
  signal?: AbortSignal,
): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json" }
  if (method !== "GET" && method !== "HEAD" && csrfToken) headers["x-csrf-token"] = csrfToken
  let payload: BodyInit | undefined
  if (body instanceof FormData) payload = body
  else if (body !== undefined) {
    headers["content-type"] = "application/json"
    payload = JSON.stringify(body)
  }
  let res: Response
  try {
    res = await fetch(`${API_BASE}${path}`, {
      method,
      headers,
      credentials: "same-origin",
      ...(payload === undefined ? {} : { body: payload }),
      ...(signal === undefined ? {} : { signal }),
    })
  } catch (e) {
    if (signal?.aborted) throw e
    throw apiError(0, "Network error", "Could not reach the server. Check your connection and try again.")
  }
  const text = await res.text()
  if (!res.ok) {
    handleUnauthorized(res.status, path)
    throw problemFromText(res.status, res.statusText, text)
  }
  if (text === "") return undefined as T
  try {
    return JSON.parse(text) as T
  } catch {
    return text as T
  }
}

export const api = {
  get: <T>(path: string, options: { readonly signal?: AbortSignal } = {}): Promise<T> =>
    request<T>("GET", path, undefined, options.signal),
  post: <T>(path: string, body?: unknown): Promise<T> => request<T>("POST", path, body),
  patch: <T>(path: string, body: unknown): Promise<T> => request<T>("PATCH", path, body),
  put: <T>(path: string, body: unknown): Promise<T> => request<T>("PUT", path, body),
  del: (path: string): Promise<void> => request<void>("DELETE", path),
}

/**
 * Upload one file as the multipart field `file` with XMLHttpRequest (POST a new one, PUT a replacement),
 * reporting upload progress (0 to 1); resolves with the parsed answer.
 */
export function uploadFile<T>(
  path: string,
  file: File,
  onProgress: (fraction: number) => void,
  method: "POST" | "PUT" = "POST",
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open(method, `${API_BASE}${path}`)
    xhr.withCredentials = true
    xhr.setRequestHeader("accept", "application/json")
    if (csrfToken) xhr.setRequestHeader("x-csrf-token", csrfToken)
    xhr.upload.addEventListener("progress", (e) => {
      if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total)
    })
    xhr.addEventListener("load", () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1)
        try {
          resolve(JSON.parse(xhr.responseText) as T)
        } catch {
          resolve(undefined as T)
        }
      } else {
        handleUnauthorized(xhr.status, path)
        reject(problemFromText(xhr.status, xhr.statusText, xhr.responseText))
      }
    })
    xhr.addEventListener("error", () =>
      reject(apiError(0, "Network error", `Could not upload ${file.name}: the connection failed.`)),
    )
    xhr.addEventListener("abort", () =>
      reject(apiError(0, "Aborted", `The upload of ${file.name} was cancelled.`)),
    )
    const form = new FormData()
    form.append("file", file, file.name)
    xhr.send(form)
  })
}

/** The message to show for any error: an ApiError's detail, else the error's message. */
export const errorMessage = (e: unknown): string =>
  isApiError(e) ? e.detail : e instanceof Error ? e.message : String(e)

/** `encodeURIComponent` for path segments. */
export const seg = (s: string): string => encodeURIComponent(s)

/** The field errors of a 400 answer by `path` (`name`, `dimensions/0/values`, …); the first per path. */
export const fieldErrorsOf = (e: unknown): Readonly<Record<string, string>> => {
  const out: Record<string, string> = {}
  if (isApiError(e))
    for (const f of e.errors) if (f.path !== "" && out[f.path] === undefined) out[f.path] = f.message
  return out
}
