import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  type AddressClass,
  checkWebhookUrl,
  classifyAddress,
  isLoopbackHost,
  isWebhookEventName,
  parseIPv6,
  validateHeaders,
  validateWebhookUrl,
  WEBHOOK_EVENTS,
} from "./Webhooks.ts"

describe("event registry", () => {
  it("lists the three events with descriptions and envelope schemas", () => {
    expect(WEBHOOK_EVENTS.map((e) => e.name)).toEqual([
      "agent.completion.succeeded",
      "agent.completion.failed",
      "webhook.ping",
    ])
    for (const e of WEBHOOK_EVENTS) {
      expect(e.description).not.toBe("")
      expect(e.payload_schema).toMatchObject({
        type: "object",
        required: ["id", "event", "occurred_at", "subscription_id", "data"],
        properties: { event: { const: e.name }, data: { type: "object" } },
      })
    }
    expect(isWebhookEventName("webhook.ping")).toBe(true)
    expect(isWebhookEventName("agent.completion")).toBe(false)
  })
})

describe("classifyAddress", () => {
  it.each<[string, AddressClass]>([
    ["8.8.8.8", "public"],
    ["1.1.1.1", "public"],
    ["93.184.216.34", "public"],
    ["10.0.0.1", "private"],
    ["10.255.255.255", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["172.15.255.255", "public"],
    ["172.32.0.0", "public"],
    ["192.168.1.1", "private"],
    ["100.64.0.1", "private"],
    ["100.127.255.255", "private"],
    ["100.128.0.0", "public"],
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["169.254.0.1", "link-local"],
    ["169.254.169.254", "metadata"],
    ["100.100.100.200", "metadata"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.255", "multicast"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.255", "reserved"],
    ["192.0.2.1", "reserved"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::ffff:10.1.2.3", "private"],
    ["::ffff:169.254.169.254", "metadata"],
    ["::ffff:8.8.8.8", "public"],
    ["::ffff:0808:0808", "public"],
    ["::127.0.0.1", "reserved"],
    ["64:ff9b::10.0.0.1", "private"],
    // A translated loopback address is not this machine: never allowed as loopback.
    ["64:ff9b::7f00:1", "reserved"],
    ["64:ff9b::127.0.0.1", "reserved"],
    ["2002:7f00:1::", "reserved"],
    ["64:ff9b::8.8.8.8", "public"],
    ["2002:0a00:0001::1", "private"],
    ["fc00::1", "private"],
    ["fd12:3456::1", "private"],
    ["fd00:ec2::254", "metadata"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["febf::1", "link-local"],
    ["ff02::1", "multicast"],
    ["2001:db8::1", "reserved"],
    ["2606:4700:4700::1111", "public"],
    ["2a00:1450:4001:80b::200e", "public"],
    ["[2606:4700::1]", "public"],
    ["not an address", "reserved"],
    ["1.2.3", "reserved"],
    ["01.2.3.4", "reserved"],
    ["256.1.1.1", "reserved"],
    ["1::2::3", "reserved"],
  ])("%s → %s", (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls)
  })

  const octet = fc.integer({ min: 0, max: 255 })
  const v4 = fc.tuple(octet, octet, octet, octet)

  it("classifies every address of 10/8, 192.168/16 and 172.16/12 as private", () => {
    fc.assert(
      fc.property(octet, octet, octet, fc.integer({ min: 16, max: 31 }), (a, b, c, second) => {
        expect(classifyAddress(`10.${a}.${b}.${c}`)).toBe("private")
        expect(classifyAddress(`192.168.${b}.${c}`)).toBe("private")
        expect(classifyAddress(`172.${second}.${b}.${c}`)).toBe("private")
      }),
    )
  })

  it("classifies an IPv4-mapped IPv6 address as its IPv4 address, in either notation", () => {
    fc.assert(
      fc.property(v4, ([a, b, c, d]) => {
        const dotted = `${a}.${b}.${c}.${d}`
        const hex = `::ffff:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
        expect(classifyAddress(`::ffff:${dotted}`)).toBe(classifyAddress(dotted))
        expect(classifyAddress(hex)).toBe(classifyAddress(dotted))
      }),
    )
  })

  it("parses any IPv6 address written with :: the same as in full", () => {
    const group = fc.integer({ min: 0, max: 0xffff })
    fc.assert(
      fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), fc.nat(7), fc.nat(8), (g, from, len) => {
        const full = g.map((x) => x.toString(16)).join(":")
        expect(parseIPv6(full)).toEqual(g)
        const to = Math.min(8, from + len)
        if (to - from < 2) return
        const zeroed = g.map((x, i) => (i >= from && i < to ? 0 : x))
        const short = `${zeroed
          .slice(0, from)
          .map((x) => x.toString(16))
          .join(":")}::${zeroed
          .slice(to)
          .map((x) => x.toString(16))
          .join(":")}`
        expect(parseIPv6(short)).toEqual(zeroed)
      }),
    )
  })

  it("never throws", () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(typeof classifyAddress(s)).toBe("string")
      }),
    )
  })
})

describe("validateHeaders", () => {
  const pathsOf = (headers: Record<string, string>) => validateHeaders(headers).map((e) => e.path)

  it("accepts up to 10 ordinary headers", () => {
    expect(validateHeaders({})).toEqual([])
    const ten = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`X-Custom-${i}`, "v"]))
    expect(validateHeaders(ten)).toEqual([])
    expect(validateHeaders({ Authorization: "Bearer abc", "X-Empty": "" })).toEqual([])
  })

  it("refuses an eleventh header", () => {
    const eleven = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`X-Custom-${i}`, "v"]))
    expect(validateHeaders(eleven)).toEqual([{ path: "headers", message: expect.stringContaining("10") }])
  })

  it("refuses a value over 1 KB (UTF-8 bytes) and a total over 4 KB", () => {
    expect(validateHeaders({ "X-A": "a".repeat(1024) })).toEqual([])
    expect(pathsOf({ "X-A": "a".repeat(1025) })).toEqual(["headers/X-A"])
    // 512 two-byte characters are 1024 bytes; 513 are 1026.
    expect(validateHeaders({ "X-A": "é".repeat(512) })).toEqual([])
    expect(pathsOf({ "X-A": "é".repeat(513) })).toEqual(["headers/X-A"])
    const four = {
      "X-1": "a".repeat(1000),
      "X-2": "a".repeat(1000),
      "X-3": "a".repeat(1000),
      "X-4": "a".repeat(1000),
    }
    expect(validateHeaders(four)).toEqual([])
    expect(validateHeaders({ ...four, "X-5": "a".repeat(100) })).toEqual([
      { path: "headers", message: expect.stringContaining("4096") },
    ])
  })

  it.each([
    "Host",
    "connection",
    "Content-Length",
    "TRANSFER-ENCODING",
    "Content-Type",
    "Service-Delivery-Id",
    "service-anything",
    "webhook-id",
    "Webhook-Timestamp",
    "webhook-signature",
  ])("refuses the reserved name %s", (name) => {
    const errors = validateHeaders({ [name]: "x" })
    expect(errors).toEqual([{ path: `headers/${name}`, message: expect.stringContaining("reserved") }])
  })

  it.each(["", "X Space", "X:Colon", "Ünïcode", "X(paren)", "a\nb"])("refuses the header name %j", (name) => {
    expect(validateHeaders({ [name]: "x" })).toEqual([
      { path: `headers/${name}`, message: expect.stringContaining("not a valid HTTP header name") },
    ])
  })

  it("refuses line breaks in values and duplicate names differing in case", () => {
    expect(pathsOf({ "X-A": "a\r\nInjected: 1" })).toEqual(["headers/X-A"])
    expect(pathsOf({ "X-A": "1", "x-a": "2" })).toEqual(["headers/x-a"])
  })

  it("accepts any set of valid names and short values within the limits", () => {
    const tchar = fc.constantFrom(
      ..."!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    )
    const name = fc
      .array(tchar, { minLength: 1, maxLength: 20 })
      .map((cs) => `X-${cs.join("")}`)
      .filter((n) => !n.toLowerCase().startsWith("service-"))
    fc.assert(
      fc.property(
        fc.uniqueArray(name, { maxLength: 10, selector: (n) => n.toLowerCase() }),
        // visible ASCII, spaces and tabs
        fc
          .array(fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.constant(9)), { maxLength: 300 })
          .map((codes) => String.fromCharCode(...codes)),
        (names, value) => {
          expect(validateHeaders(Object.fromEntries(names.map((n) => [n, value])))).toEqual([])
        },
      ),
    )
  })
})

describe("checkWebhookUrl (at creation, without resolving names)", () => {
  const deny = { allowLoopback: false }
  const allow = { allowLoopback: true }

  it.each([
    ["https://hooks.example.com/dxs", deny],
    ["https://not-deployed-yet.internal.example/hook", deny],
    ["https://93.184.216.34/hook", deny],
    ["http://localhost:8080/hook", allow],
    ["https://[::1]:8443/", allow],
  ] as const)("accepts %s", (url, settings) => {
    expect(checkWebhookUrl(url, settings).ok).toBe(true)
  })

  it.each([
    ["https://10.0.0.1/", deny, "private address"],
    ["https://169.254.169.254/", allow, "cloud metadata address"],
    ["https://localhost/", deny, "loopback address"],
    ["https://127.0.0.1/", deny, "loopback address"],
    ["https://[64:ff9b::7f00:1]/", allow, "reserved address"],
    ["https://[2002:7f00:1::]/", allow, "reserved address"],
    ["https://[::ffff:10.0.0.1]/", allow, "private address"],
    ["https://example.com:0/", deny, "port 0"],
  ] as const)("refuses %s", (url, settings, words) => {
    const r = checkWebhookUrl(url, settings)
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.message).toContain(words)
  })
})

describe("validateWebhookUrl", () => {
  const deny = { allowLoopback: false }
  const allow = { allowLoopback: true }

  it.each([
    ["https://example.com/hook", deny],
    ["https://example.com:8443/hook?x=1", deny],
    ["https://10.0.0.1/", deny], // address classes are checked after resolution
    ["http://localhost:3000/hook", allow],
    ["http://127.0.0.1/hook", allow],
    ["http://[::1]:8080/", allow],
    ["http://api.localhost/", allow],
  ] as const)("accepts %s", (url, settings) => {
    expect(validateWebhookUrl(url, settings).ok).toBe(true)
  })

  it.each([
    ["example.com/hook", deny, "absolute"],
    ["/hook", deny, "absolute"],
    ["ftp://example.com/", deny, "https"],
    ["http://example.com/", deny, "https"],
    ["http://example.com/", allow, "loopback"],
    ["http://localhost/", deny, "https"],
    ["http://10.0.0.1/", allow, "loopback"],
    ["https://user:pw@example.com/", deny, "credentials"],
    ["https://user@example.com/", deny, "credentials"],
    ["https://example.com/#frag", deny, "fragment"],
    ["https://example.com/#", deny, "fragment"],
    ["https://example.com:0/hook", deny, "port 0"],
    ["http://localhost:0/", allow, "port 0"],
  ] as const)("refuses %s", (url, settings, word) => {
    const r = validateWebhookUrl(url, settings)
    expect(r.ok).toBe(false)
    if (!r.ok) expect(r.message).toContain(word)
  })

  it("recognises loopback hosts", () => {
    for (const h of [
      "localhost",
      "LOCALHOST",
      "a.localhost",
      "127.0.0.1",
      "127.1.2.3",
      "[::1]",
      "::ffff:127.0.0.1",
    ])
      expect(isLoopbackHost(h), h).toBe(true)
    for (const h of ["example.com", "localhost.example.com", "10.0.0.1", "::2"])
      expect(isLoopbackHost(h), h).toBe(false)
  })
})
