import * as net from "node:net"

/**
 * What the proxy does with connections: `pass` forwards them; `refuse` closes the port (connections are
 * refused) and cuts the open ones; `hang` accepts connections and never answers (the open ones stall too).
 */
export type ProxyMode = "pass" | "refuse" | "hang"

export interface TcpProxy {
  /** The loopback port clients connect to (the same in every mode). */
  readonly port: number
  readonly mode: () => ProxyMode
  /** Switches the mode; resolves once the port is listening again or closed. */
  readonly setMode: (mode: ProxyMode) => Promise<void>
  readonly stop: () => Promise<void>
}

/**
 * A switchable TCP proxy on a free loopback port in front of `target` (a server on loopback), for tests of
 * outages: the part behind it refusing connections or hanging, and coming back. For tests only.
 */
export const startTcpProxy = async (targetPort: number, targetHost = "127.0.0.1"): Promise<TcpProxy> => {
  let mode: ProxyMode = "pass"
  const open = new Set<net.Socket>()
  const stalled = new Set<net.Socket>()
  const track = (socket: net.Socket) => {
    open.add(socket)
    socket.once("close", () => {
      open.delete(socket)
      stalled.delete(socket)
    })
    socket.on("error", () => socket.destroy())
  }
  const server = net.createServer((client) => {
    track(client)
    if (mode !== "pass") {
      // Accepted, never answered, nothing read.
      stalled.add(client)
      client.pause()
      return
    }
    const upstream = net.connect(targetPort, targetHost)
    track(upstream)
    upstream.once("close", () => client.destroy())
    client.once("close", () => upstream.destroy())
    client.pipe(upstream)
    upstream.pipe(client)
  })
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject)
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject)
        resolve((server.address() as net.AddressInfo).port)
      })
    })
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()))
  const cutAll = () => {
    for (const socket of open) socket.destroy()
  }
  const port = await listen(0)
  return {
    port,
    mode: () => mode,
    setMode: async (next) => {
      if (next === mode) return
      const was = mode
      mode = next
      if (next === "refuse") {
        cutAll()
        await close()
        return
      }
      if (next === "hang") {
        // Open connections stall: nothing more goes either way.
        for (const socket of open) {
          socket.pause()
          stalled.add(socket)
          socket.unpipe()
        }
      } else {
        // Back to passing: what stalled is cut (its clients retry on fresh connections).
        for (const socket of stalled) socket.destroy()
      }
      if (was === "refuse") await listen(port)
    },
    stop: async () => {
      cutAll()
      if (mode !== "refuse") await close()
    },
  }
}
