/**
 * Where a delivery may go: the URL passes the domain's rules, its host is resolved, and every address it
 * resolves to must be public (or loopback, when the configuration allows it). The caller connects to the
 * returned address, never resolving the name again, so a name cannot switch to an internal address
 * between the check and the connection.
 */
import { lookup } from "node:dns/promises"
import {
  bareHost,
  classifyAddress,
  describeAddressClass,
  isAllowedAddress,
  parseIPv4,
  parseIPv6,
  validateWebhookUrl,
} from "@dxs/domain/Webhooks"

export interface ResolvedAddress {
  readonly address: string
  readonly family: number
}

/** Every address of a host name (as `dns.lookup` with `all: true` gives them). */
export type Resolver = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true })

export type TargetCheck =
  | { readonly ok: true; readonly url: URL; readonly address: string; readonly family: 4 | 6 }
  | { readonly ok: false; readonly reason: string }

const literalFamily = (host: string): 4 | 6 | undefined =>
  parseIPv4(host) !== undefined ? 4 : parseIPv6(host) !== undefined ? 6 : undefined

/** How long a host name may take to resolve before the attempt counts as failed. */
export const RESOLVE_TIMEOUT_MS = 5_000

/** `resolve(host)`, or a rejection with code `ETIMEOUT` after `ms`. */
const resolveWithin = (resolve: Resolver, host: string, ms: number) =>
  new Promise<ReadonlyArray<ResolvedAddress>>((done, fail) => {
    const timer = setTimeout(() => fail(Object.assign(new Error("timed out"), { code: "ETIMEOUT" })), ms)
    resolve(host).then(
      (a) => {
        clearTimeout(timer)
        done(a)
      },
      (e) => {
        clearTimeout(timer)
        fail(e)
      },
    )
  })

export const checkTarget = async (
  url: string,
  settings: { readonly allowLoopback: boolean },
  resolve: Resolver = systemResolver,
  resolveTimeoutMs = RESOLVE_TIMEOUT_MS,
): Promise<TargetCheck> => {
  const valid = validateWebhookUrl(url, settings)
  if (!valid.ok) return { ok: false, reason: `the URL ${valid.message}` }
  const host = bareHost(valid.url)
  const family = literalFamily(host)
  let addresses: ReadonlyArray<ResolvedAddress>
  if (family !== undefined) addresses = [{ address: host, family }]
  else {
    try {
      addresses = await resolveWithin(resolve, host, resolveTimeoutMs)
    } catch (e) {
      const code = (e as { code?: unknown }).code
      return {
        ok: false,
        reason: `the host ${host} could not be resolved${typeof code === "string" ? ` (${code})` : ""}`,
      }
    }
    if (addresses.length === 0) return { ok: false, reason: `the host ${host} could not be resolved` }
  }
  for (const a of addresses) {
    const cls = classifyAddress(a.address)
    if (!isAllowedAddress(cls, settings.allowLoopback))
      return {
        ok: false,
        reason: `the URL resolves to a ${describeAddressClass(cls)} address (${a.address}), which may not receive webhooks`,
      }
    // Plain http is allowed to loopback only: a loopback name must not lead anywhere else.
    if (valid.url.protocol === "http:" && cls !== "loopback")
      return {
        ok: false,
        reason: `the URL uses plain http but resolves to ${a.address}, which is not a loopback address`,
      }
  }
  const first = addresses[0]!.address
  return { ok: true, url: valid.url, address: first, family: literalFamily(first) ?? 4 }
}
