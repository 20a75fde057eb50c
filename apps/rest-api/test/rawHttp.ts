/** HTTP requests written byte by byte on a raw socket, for bodies and disconnects no client library makes. */
import { randomBytes } from "node:crypto"
import * as net from "node:net"

export interface Part {
  readonly name: string
  /** A file part when given (the name as written in `filename="…"`, raw UTF-8). */
  readonly filename?: string
  /** A complete `Content-Disposition` value, instead of one made from `name` and `filename`. */
  readonly disposition?: string
  readonly contentType?: string
  readonly body: Uint8Array | string
}

/** A multipart/form-data body with a random boundary. */
export const multipartBody = (
  parts: ReadonlyArray<Part>,
  boundary = `b${randomBytes(12).toString("hex")}`,
) => {
  const chunks: Array<Buffer> = []
  for (const p of parts) {
    const disposition =
      p.disposition ??
      `form-data; name="${p.name}"${p.filename === undefined ? "" : `; filename="${p.filename}"`}`
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${
          p.contentType === undefined ? "" : `Content-Type: ${p.contentType}\r\n`
        }\r\n`,
        "utf8",
      ),
      Buffer.from(p.body),
      Buffer.from("\r\n"),
    )
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` }
}

export interface RawOutcome {
  /** The status of the answer, when one arrived before the socket closed. */
  readonly status: number | undefined
  readonly headers: Record<string, string>
  readonly body: string
}

export interface RawRequest {
  readonly port: number
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: Uint8Array
  /** Sends only this many bytes of the body, then closes the socket. */
  readonly sendBytes?: number
  /** Destroys the socket this many milliseconds after the last byte sent. */
  readonly cutAfterMs?: number
  /** Gives up waiting for an answer after this many milliseconds (the outcome then has no status). */
  readonly timeoutMs?: number
}

const parseAnswer = (raw: Buffer): RawOutcome => {
  const text = raw.toString("utf8")
  const end = text.indexOf("\r\n\r\n")
  const head = end < 0 ? text : text.slice(0, end)
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)
  const headers: Record<string, string> = {}
  for (const line of head.split("\r\n").slice(1)) {
    const i = line.indexOf(":")
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim()
  }
  let body = end < 0 ? "" : text.slice(end + 4)
  if (headers["transfer-encoding"] === "chunked") {
    let out = ""
    let rest = body
    for (;;) {
      const nl = rest.indexOf("\r\n")
      if (nl < 0) break
      const size = Number.parseInt(rest.slice(0, nl), 16)
      if (!Number.isFinite(size) || size === 0) break
      out += rest.slice(nl + 2, nl + 2 + size)
      rest = rest.slice(nl + 2 + size + 2)
    }
    body = out
  }
  return { status: status ? Number(status[1]) : undefined, headers, body }
}

/**
 * Writes the request (head, then body) and reads until the server closes the connection, the cut
 * happens, or the timeout passes. `Connection: close` is always sent, so an answer ends the exchange.
 */
export const rawRequest = (r: RawRequest): Promise<RawOutcome> =>
  new Promise((resolve) => {
    const socket = net.connect({ port: r.port, host: "127.0.0.1" })
    const received: Array<Buffer> = []
    let settled = false
    const finish = () => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve(parseAnswer(Buffer.concat(received)))
    }
    const timer = setTimeout(finish, r.timeoutMs ?? 30_000)
    socket.on("data", (chunk: Buffer) => received.push(chunk))
    socket.on("error", finish)
    socket.on("close", finish)
    socket.on("connect", () => {
      const head = [
        `${r.method} ${r.path} HTTP/1.1`,
        "Host: 127.0.0.1",
        "Connection: close",
        ...Object.entries(r.headers).map(([k, v]) => `${k}: ${v}`),
        "",
        "",
      ].join("\r\n")
      const body = r.sendBytes === undefined ? r.body : r.body.subarray(0, r.sendBytes)
      socket.write(Buffer.from(head, "utf8"))
      socket.write(body, () => {
        if (r.sendBytes !== undefined && r.cutAfterMs === undefined) return finish()
        if (r.cutAfterMs !== undefined) setTimeout(finish, r.cutAfterMs)
      })
    })
  })
