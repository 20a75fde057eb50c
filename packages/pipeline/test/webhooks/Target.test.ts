import { describe, expect, it } from "vitest"
import { checkTarget, type Resolver } from "../../src/webhooks/Target.ts"

/** A resolver over a fixed table; it records the names it was asked about. */
const table = (entries: Record<string, ReadonlyArray<string>>) => {
  const asked: Array<string> = []
  const resolve: Resolver = async (host) => {
    asked.push(host)
    const addresses = entries[host]
    if (addresses === undefined) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" })
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
  }
  return { resolve, asked }
}

const dns = table({
  "example.com": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
  "v6.example.com": ["2606:4700::1111"],
  "internal.example.com": ["10.0.0.7"],
  "mixed.example.com": ["93.184.216.34", "192.168.1.5"],
  "metadata.example.com": ["169.254.169.254"],
  "mapped.example.com": ["::ffff:10.0.0.1"],
  localhost: ["127.0.0.1", "::1"],
  "odd.localhost": ["93.184.216.34"],
  "empty.example.com": [],
})

const deny = { allowLoopback: false }
const allow = { allowLoopback: true }

describe("checkTarget", () => {
  it("accepts a public host and returns the first address to connect to", async () => {
    const r = await checkTarget("https://example.com/hook", deny, dns.resolve)
    expect(r).toMatchObject({ ok: true, address: "93.184.216.34", family: 4 })
    if (r.ok) expect(r.url.href).toBe("https://example.com/hook")
    expect(await checkTarget("https://v6.example.com/", deny, dns.resolve)).toMatchObject({
      ok: true,
      address: "2606:4700::1111",
      family: 6,
    })
  })

  it("checks IP literals without asking the resolver", async () => {
    const { resolve, asked } = table({})
    expect(await checkTarget("https://8.8.8.8/", deny, resolve)).toMatchObject({
      ok: true,
      address: "8.8.8.8",
    })
    expect(await checkTarget("https://[2606:4700::1111]:8443/", deny, resolve)).toMatchObject({
      ok: true,
      address: "2606:4700::1111",
      family: 6,
    })
    expect(asked).toEqual([])
  })

  it.each([
    ["https://10.0.0.1/", "private address (10.0.0.1)"],
    ["https://169.254.169.254/latest/meta-data/", "cloud metadata address"],
    ["https://100.100.100.200/", "cloud metadata address"],
    ["https://[fd00:ec2::254]/", "cloud metadata address"],
    ["https://[::1]/", "loopback address"],
    ["https://127.0.0.1/", "loopback address"],
    ["https://2130706433/", "loopback address"], // 127.0.0.1 as one number
    ["https://0.0.0.0/", "unspecified"],
    ["https://[fe80::1]/", "link-local address"],
    ["https://224.0.0.1/", "multicast address"],
    ["https://[::ffff:10.0.0.1]/", "private address"],
    ["https://internal.example.com/", "private address (10.0.0.7)"],
    ["https://mixed.example.com/", "private address (192.168.1.5)"],
    ["https://metadata.example.com/", "cloud metadata address"],
    ["https://mapped.example.com/", "private address"],
    ["https://localhost/", "loopback address"],
  ])("refuses %s", async (url, reason) => {
    const r = await checkTarget(url, deny, dns.resolve)
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.reason).toContain(reason)
  })

  it("refuses what the URL rules refuse, before resolving", async () => {
    const { resolve, asked } = table({})
    for (const [url, word] of [
      ["http://example.com/", "https"],
      ["https://u:p@example.com/", "credentials"],
      ["https://example.com/#x", "fragment"],
      ["nonsense", "absolute"],
    ] as const) {
      const r = await checkTarget(url, deny, resolve)
      expect(r.ok).toBe(false)
      if (!r.ok) expect(r.reason).toContain(word)
    }
    expect(asked).toEqual([])
  })

  it("refuses a host that does not resolve", async () => {
    for (const url of ["https://nowhere.example.com/", "https://empty.example.com/"]) {
      const r = await checkTarget(url, deny, dns.resolve)
      expect(r.ok).toBe(false)
      if (!r.ok) expect(r.reason).toContain("could not be resolved")
    }
  })

  it("refuses a host whose resolution takes longer than the limit", async () => {
    // A resolver that never answers: without the limit, this test would hang until vitest gives up.
    const never: Resolver = () => new Promise(() => undefined)
    const r = await checkTarget("https://slow.example.com/hook", { allowLoopback: false }, never, 50)
    expect(r).toEqual({ ok: false, reason: "the host slow.example.com could not be resolved (ETIMEOUT)" })
  })

  it("allows loopback (over http too) only when the settings allow it; private stays refused", async () => {
    expect(await checkTarget("http://localhost:8080/hook", allow, dns.resolve)).toMatchObject({
      ok: true,
      address: "127.0.0.1",
    })
    expect(await checkTarget("https://[::1]:8443/", allow, dns.resolve)).toMatchObject({
      ok: true,
      address: "::1",
      family: 6,
    })
    expect(await checkTarget("http://127.0.0.1:9/", allow, dns.resolve)).toMatchObject({ ok: true })
    expect((await checkTarget("http://localhost/", deny, dns.resolve)).ok).toBe(false)
    expect((await checkTarget("https://10.0.0.1/", allow, dns.resolve)).ok).toBe(false)
    expect((await checkTarget("https://169.254.169.254/", allow, dns.resolve)).ok).toBe(false)
    // A loopback name that resolves elsewhere gets no plain http.
    const odd = await checkTarget("http://odd.localhost/", allow, dns.resolve)
    expect(odd.ok).toBe(false)
    if (!odd.ok) expect(odd.reason).toContain("not a loopback address")
  })
})
