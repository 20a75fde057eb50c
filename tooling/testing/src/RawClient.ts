/**
 * HTTP requests exactly as written: the path is sent as given (no normalisation of `..`, no re-encoding,
 * unlike `fetch`), the body as raw bytes, and an answer that does not come within the time limit is
 * reported as such instead of waiting forever.
 */
import * as http from "node:http"

export interface RawRequest {
  readonly method: string
  /** The request target as sent, e.g. `/api/v1/projects/../x/?a=%00`. */
  readonly path: string
  readonly headers?: Record<string, string>
  readonly body?: Buffer | string
}

export type RawOutcome =
  | {
      readonly kind: "answer"
      readonly status: number
      readonly headers: http.IncomingHttpHeaders
      readonly body: Buffer
    }
  | { readonly kind: "no answer"; readonly reason: string }

/** A client on `origin` with keep-alive connections, at most `sockets` at once. */
export const rawClient = (origin: string, options: { sockets: number; timeoutMs: number }) => {
  const url = new URL(origin)
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.sockets })
  const once = (request: RawRequest) =>
    new Promise<RawOutcome & { readonly retry?: boolean }>((resolve) => {
      let settled = false
      const finish = (outcome: RawOutcome & { readonly retry?: boolean }) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve(outcome)
      }
      const body = request.body === undefined ? undefined : Buffer.from(request.body)
      let req: http.ClientRequest
      try {
        req = http.request({
          host: url.hostname,
          port: Number(url.port),
          method: request.method,
          path: request.path,
          agent,
          headers: {
            ...(body === undefined ? {} : { "content-length": String(body.length) }),
            ...request.headers,
          },
        })
      } catch (e) {
        finish({ kind: "no answer", reason: `the request could not be sent: ${String(e)}` })
        return
      }
      const timer = setTimeout(() => {
        finish({ kind: "no answer", reason: `no answer within ${options.timeoutMs} ms` })
        req.destroy()
      }, options.timeoutMs)
      req.on("response", (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () =>
          finish({
            kind: "answer",
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks),
          }),
        )
        res.on("error", (e) => finish({ kind: "no answer", reason: `the answer broke off: ${e.message}` }))
      })
      req.on("error", (e: NodeJS.ErrnoException) =>
        // A kept-alive connection the server closed just before it was reused: Node's advice is to retry.
        finish({
          kind: "no answer",
          reason: `${e.code ?? ""} ${e.message}`.trim(),
          retry: req.reusedSocket && e.code === "ECONNRESET",
        }),
      )
      req.end(body)
    })
  const send = async (request: RawRequest): Promise<RawOutcome> => {
    const first = await once(request)
    return first.kind === "no answer" && first.retry ? once(request) : first
  }
  return { send, close: () => agent.destroy() }
}
