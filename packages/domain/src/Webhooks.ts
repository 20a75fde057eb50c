/**
 * Webhook rules without I/O: the event registry, the limits on custom headers, which URLs may receive
 * deliveries, and what kind of network address an IP is (so targets inside private networks, loopback
 * or cloud metadata services are refused).
 */

// ---------------------------------------------------------------------------------------------------------
// Event registry

export type JsonSchema = { readonly [key: string]: unknown }

export interface WebhookEventType {
  readonly name: string
  readonly description: string
  /** JSON Schema (Draft 2020-12) of the delivery body for this event: the envelope with its `data`. */
  readonly payload_schema: JsonSchema
}

const envelope = (event: string, data: JsonSchema): JsonSchema => ({
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  required: ["id", "event", "occurred_at", "subscription_id", "data"],
  properties: {
    id: { type: "string", description: "the delivery id; equal to the webhook-id header" },
    event: { const: event },
    occurred_at: { type: "string", format: "date-time" },
    subscription_id: { type: "string", format: "uuid" },
    data,
  },
})

export const WEBHOOK_EVENTS: ReadonlyArray<WebhookEventType> = [
  {
    name: "agent.completion.succeeded",
    description: "A project's agent extraction pipeline finished successfully (a launched run ended).",
    payload_schema: envelope("agent.completion.succeeded", {
      type: "object",
      required: ["project_id", "run_number", "agents"],
      properties: {
        project_id: { type: "string", format: "uuid" },
        run_number: { type: "integer" },
        agents: {
          type: "array",
          items: {
            type: "object",
            required: ["id", "name", "extraction_status"],
            properties: {
              id: { type: "string", format: "uuid" },
              name: { type: "string" },
              extraction_status: {
                type: "string",
                description: "the agent's terminal status for the run, typically `Processed` or `No Result`",
              },
            },
          },
        },
      },
    }),
  },
  {
    name: "agent.completion.failed",
    description: "A project's agent extraction pipeline failed (a launched run ended without results).",
    payload_schema: envelope("agent.completion.failed", {
      type: "object",
      required: ["project_id", "run_number", "failure_reason"],
      properties: {
        project_id: { type: "string", format: "uuid" },
        run_number: { type: "integer" },
        failure_reason: {
          type: "string",
          description:
            "currently always `internal_error`; reserved: `validation_failed`, `extraction_failed`, `expired`. Receivers must tolerate unknown values.",
        },
      },
    }),
  },
  {
    name: "webhook.ping",
    description: "A synthetic test event, sent by POST /webhooks/{id}/test/.",
    payload_schema: envelope("webhook.ping", {
      type: "object",
      required: ["message"],
      properties: { message: { type: "string" } },
    }),
  },
]

export const WEBHOOK_EVENT_NAMES: ReadonlyArray<string> = WEBHOOK_EVENTS.map((e) => e.name)

export const isWebhookEventName = (name: string): boolean => WEBHOOK_EVENT_NAMES.includes(name)

// ---------------------------------------------------------------------------------------------------------
// Custom headers

export interface WebhookFieldError {
  readonly path: string
  readonly message: string
}

export const HEADER_LIMITS = {
  /** Entries per subscription. */
  maxEntries: 10,
  /** Bytes (UTF-8) per value. */
  maxValueBytes: 1024,
  /** Bytes (UTF-8) of all names and values together. */
  maxTotalBytes: 4096,
} as const

/** Names a subscription may not set (compared case-insensitively), besides any starting with `Service-`. */
export const RESERVED_HEADER_NAMES: ReadonlyArray<string> = [
  "host",
  "connection",
  "content-length",
  "transfer-encoding",
  "content-type",
  "webhook-id",
  "webhook-timestamp",
  "webhook-signature",
]

/** The prefix of the service's own delivery headers (e.g. `Service-Delivery-Id`). */
export const SERVICE_HEADER_PREFIX = "service-"

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** A field value: visible characters, spaces and tabs (no line breaks or other control characters). */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/

const utf8Bytes = (s: string): number => new TextEncoder().encode(s).length

export const isHeaderReserved = (name: string): boolean => {
  const lower = name.toLowerCase()
  return RESERVED_HEADER_NAMES.includes(lower) || lower.startsWith(SERVICE_HEADER_PREFIX)
}

/**
 * Problems with a subscription's custom headers, each naming its header (`headers/<name>`) or the whole
 * set (`headers`). Empty when the headers are acceptable.
 */
export const validateHeaders = (headers: unknown): ReadonlyArray<WebhookFieldError> => {
  if (typeof headers !== "object" || headers === null || Array.isArray(headers))
    return [{ path: "headers", message: "must be an object of header name to string value" }]
  const errors: Array<WebhookFieldError> = []
  const entries = Object.entries(headers)
  for (const [name, value] of entries)
    if (typeof value !== "string") errors.push({ path: `headers/${name}`, message: "must be a string" })
  if (errors.length > 0) return errors
  if (entries.length > HEADER_LIMITS.maxEntries)
    errors.push({
      path: "headers",
      message: `at most ${HEADER_LIMITS.maxEntries} custom headers are allowed (got ${entries.length})`,
    })
  const seen = new Set<string>()
  let total = 0
  for (const [name, value] of entries) {
    const path = `headers/${name}`
    total += utf8Bytes(name) + utf8Bytes(String(value))
    if (!TOKEN.test(name)) {
      errors.push({
        path,
        message: "is not a valid HTTP header name (letters, digits and !#$%&'*+-.^_`|~ only)",
      })
      continue
    }
    const lower = name.toLowerCase()
    if (isHeaderReserved(name)) {
      errors.push({
        path,
        message: lower.startsWith(SERVICE_HEADER_PREFIX)
          ? "is reserved: names starting with Service- are set by the service"
          : `is reserved: ${name} is set by the service`,
      })
      continue
    }
    if (seen.has(lower)) {
      errors.push({ path, message: "is given more than once (header names are case-insensitive)" })
      continue
    }
    seen.add(lower)
    if (typeof value !== "string") {
      errors.push({ path, message: "must be a string" })
      continue
    }
    const bytes = utf8Bytes(value)
    if (bytes > HEADER_LIMITS.maxValueBytes)
      errors.push({
        path,
        message: `value is ${bytes} bytes; at most ${HEADER_LIMITS.maxValueBytes} bytes (1 KB) are allowed`,
      })
    else if (!FIELD_VALUE.test(value))
      errors.push({ path, message: "value must not contain line breaks or other control characters" })
  }
  if (total > HEADER_LIMITS.maxTotalBytes)
    errors.push({
      path: "headers",
      message: `names and values total ${total} bytes; at most ${HEADER_LIMITS.maxTotalBytes} bytes (4 KB) are allowed`,
    })
  return errors
}

// ---------------------------------------------------------------------------------------------------------
// Addresses

export type AddressClass =
  | "public"
  | "private"
  | "loopback"
  | "link-local"
  | "multicast"
  | "metadata"
  | "unspecified"
  | "reserved"

/** Four octets of a dotted-decimal IPv4 address, or undefined. */
export const parseIPv4 = (text: string): readonly [number, number, number, number] | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  const octets: Array<number> = []
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || (p.length > 1 && p.startsWith("0"))) return undefined
    const n = Number(p)
    if (n > 255) return undefined
    octets.push(n)
  }
  return octets as unknown as readonly [number, number, number, number]
}

/** Eight 16-bit groups of an IPv6 address (a zone `%…` is ignored), or undefined. */
export const parseIPv6 = (text: string): ReadonlyArray<number> | undefined => {
  let s = text
  const zone = s.indexOf("%")
  if (zone >= 0) s = s.slice(0, zone)
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1)
  if (s === "" || !/^[0-9a-fA-F:.]+$/.test(s)) return undefined
  // An IPv4 tail (::ffff:1.2.3.4) becomes two groups.
  let tail: Array<number> = []
  const lastColon = s.lastIndexOf(":")
  if (s.includes(".")) {
    const v4 = parseIPv4(s.slice(lastColon + 1))
    if (v4 === undefined) return undefined
    tail = [(v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]]
    s = s.slice(0, lastColon + 1)
    if (s.endsWith(":") && !s.endsWith("::")) s = s.slice(0, -1)
  }
  const halves = s.split("::")
  if (halves.length > 2) return undefined
  const groupsOf = (part: string): Array<number> | undefined => {
    if (part === "") return []
    const out: Array<number> = []
    for (const g of part.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined
      out.push(Number.parseInt(g, 16))
    }
    return out
  }
  const head = groupsOf(halves[0] ?? "")
  if (head === undefined) return undefined
  if (halves.length === 1) {
    const all = [...head, ...tail]
    return all.length === 8 ? all : undefined
  }
  const rest = groupsOf(halves[1] ?? "")
  if (rest === undefined) return undefined
  const known = head.length + rest.length + tail.length
  if (known > 7) return undefined
  return [...head, ...new Array<number>(8 - known).fill(0), ...rest, ...tail]
}

const inV4 = (o: readonly [number, number, number, number], base: string, bits: number): boolean => {
  const b = parseIPv4(base)!
  const value = (x: readonly number[]) => (((x[0]! << 24) >>> 0) + (x[1]! << 16) + (x[2]! << 8) + x[3]!) >>> 0
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0
  return (value(o) & mask) >>> 0 === (value(b) & mask) >>> 0
}

const V4_METADATA = ["169.254.169.254", "100.100.100.200"]

const classifyV4 = (o: readonly [number, number, number, number]): AddressClass => {
  const text = o.join(".")
  if (V4_METADATA.includes(text)) return "metadata"
  if (inV4(o, "0.0.0.0", 8)) return "unspecified"
  if (inV4(o, "127.0.0.0", 8)) return "loopback"
  if (inV4(o, "169.254.0.0", 16)) return "link-local"
  if (
    inV4(o, "10.0.0.0", 8) ||
    inV4(o, "172.16.0.0", 12) ||
    inV4(o, "192.168.0.0", 16) ||
    inV4(o, "100.64.0.0", 10) // shared address space (carrier-grade NAT)
  )
    return "private"
  if (inV4(o, "224.0.0.0", 4)) return "multicast"
  if (
    inV4(o, "240.0.0.0", 4) || // includes 255.255.255.255
    inV4(o, "192.0.0.0", 24) ||
    inV4(o, "192.0.2.0", 24) ||
    inV4(o, "198.51.100.0", 24) ||
    inV4(o, "203.0.113.0", 24) ||
    inV4(o, "198.18.0.0", 15) ||
    inV4(o, "192.88.99.0", 24)
  )
    return "reserved"
  return "public"
}

const embeddedV4 = (g: ReadonlyArray<number>, at: number): readonly [number, number, number, number] => [
  g[at]! >> 8,
  g[at]! & 0xff,
  g[at + 1]! >> 8,
  g[at + 1]! & 0xff,
]

const translated = (cls: AddressClass): AddressClass => (cls === "loopback" ? "reserved" : cls)

const classifyV6 = (g: ReadonlyArray<number>): AddressClass => {
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0)
  if (zeros(0, 8)) return "unspecified"
  if (zeros(0, 7) && g[7] === 1) return "loopback"
  // IPv4-mapped ::ffff:a.b.c.d: the IPv4 address is what is reached.
  if (zeros(0, 5) && g[5] === 0xffff) return classifyV4(embeddedV4(g, 6))
  // IPv4-compatible (deprecated) and the rest of ::/96.
  if (zeros(0, 6)) return "reserved"
  // NAT64 (64:ff9b::/96) reaches the embedded IPv4 address through a translator, and 6to4 (2002::/16)
  // embeds the IPv4 address of its relay end: what the embedded address is, except that a translated
  // loopback address is not this machine (never "loopback", which configuration may allow).
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return translated(classifyV4(embeddedV4(g, 6)))
  if (g[0] === 0x2002) return translated(classifyV4(embeddedV4(g, 1)))
  if (g[0] === 0xfd00 && g[1] === 0x0ec2 && zeros(2, 7) && g[7] === 0x254) return "metadata"
  const first = g[0]!
  if ((first & 0xfe00) === 0xfc00) return "private" // fc00::/7 unique local
  if ((first & 0xffc0) === 0xfe80) return "link-local" // fe80::/10
  if ((first & 0xffc0) === 0xfec0) return "private" // fec0::/10 site-local (deprecated)
  if ((first & 0xff00) === 0xff00) return "multicast" // ff00::/8
  if (first === 0x2001 && g[1] === 0x0db8) return "reserved" // documentation
  if (first === 0x2001 && g[1] === 0) return "reserved" // Teredo
  if ((first & 0xe000) === 0x2000) return "public" // global unicast 2000::/3
  return "reserved"
}

/**
 * What kind of address an IPv4 or IPv6 literal is. Only `public` addresses may receive deliveries
 * (and `loopback` when the configuration allows it). Text that is not an IP address is `reserved`.
 */
export const classifyAddress = (ip: string): AddressClass => {
  const v4 = parseIPv4(ip)
  if (v4 !== undefined) return classifyV4(v4)
  const v6 = parseIPv6(ip)
  if (v6 !== undefined) return classifyV6(v6)
  return "reserved"
}

export const isIpLiteral = (host: string): boolean =>
  parseIPv4(host) !== undefined || parseIPv6(host) !== undefined

/** Whether a delivery may connect to an address of this class. */
export const isAllowedAddress = (cls: AddressClass, allowLoopback: boolean): boolean =>
  cls === "public" || (allowLoopback && cls === "loopback")

/** Words for an address class in error messages. */
export const describeAddressClass = (cls: AddressClass): string =>
  cls === "metadata" ? "cloud metadata" : cls === "unspecified" ? "unspecified (0.0.0.0 or ::)" : cls

// ---------------------------------------------------------------------------------------------------------
// URLs

/** The host of a URL without the brackets of an IPv6 literal. */
export const bareHost = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, "$1")

/** `localhost`, a name under `.localhost`, or a loopback IP literal. */
export const isLoopbackHost = (host: string): boolean => {
  const h = host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "")
  if (h === "localhost" || h.endsWith(".localhost")) return true
  return isIpLiteral(h) && classifyAddress(h) === "loopback"
}

export type UrlCheck =
  | { readonly ok: true; readonly url: URL }
  | { readonly ok: false; readonly message: string }

/**
 * Whether a URL may receive deliveries, before any name resolution: absolute, https (plain http only to a
 * loopback host when `allowLoopback`), no credentials, no fragment.
 */
export const validateWebhookUrl = (text: string, settings: { readonly allowLoopback: boolean }): UrlCheck => {
  let url: URL
  try {
    url = new URL(text.trim())
  } catch {
    return { ok: false, message: "must be an absolute URL (https://…)" }
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return { ok: false, message: `must use https (got ${url.protocol.replace(/:$/, "")})` }
  if (url.hostname === "") return { ok: false, message: "must name a host" }
  if (url.port === "0") return { ok: false, message: "must not use port 0" }
  if (url.protocol === "http:" && !(settings.allowLoopback && isLoopbackHost(url.hostname)))
    return {
      ok: false,
      message: settings.allowLoopback
        ? "must use https (plain http is allowed only to a loopback host)"
        : "must use https",
    }
  if (url.username !== "" || url.password !== "")
    return { ok: false, message: "must not contain credentials (user:password@); use custom headers instead" }
  if (url.hash !== "" || text.includes("#")) return { ok: false, message: "must not contain a fragment (#…)" }
  if (url.href.length > 2048) return { ok: false, message: "must be at most 2048 characters long" }
  return { ok: true, url }
}

/**
 * What can be known of a target without resolving its name, as checked when a subscription is saved: the
 * URL's rules, and the class of an IP literal or a loopback name. A host name is resolved and its
 * addresses checked at every delivery instead, so a receiver can be registered before its name resolves.
 */
export const checkWebhookUrl = (text: string, settings: { readonly allowLoopback: boolean }): UrlCheck => {
  const valid = validateWebhookUrl(text, settings)
  if (!valid.ok) return valid
  const host = bareHost(valid.url)
  const cls = isIpLiteral(host) ? classifyAddress(host) : isLoopbackHost(host) ? "loopback" : undefined
  if (cls !== undefined && !isAllowedAddress(cls, settings.allowLoopback))
    return {
      ok: false,
      message: `points at a ${describeAddressClass(cls)} address (${host}), which may not receive webhooks`,
    }
  return valid
}
