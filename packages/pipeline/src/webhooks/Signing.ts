/**
 * Webhook signatures (Standard Webhooks v1, DESIGN §4). The signed content is `<webhook-id>.<webhook-timestamp>.<body>`;
 * the key is the secret's base64 part after `whsec_`; the `webhook-signature` header is `v1,<base64 HMAC-SHA256>`
 * (a receiver may see several space-separated signatures, e.g. during a secret rotation). The scheme's reference
 * implementation (`standardwebhooks`) computes the signature.
 */
import { timingSafeEqual } from "node:crypto"
import { Webhook } from "standardwebhooks"

export const SECRET_PREFIX = "whsec_"

export interface SignInput {
  /** The signing secret, `whsec_<base64>`. */
  readonly secret: string
  /** The `webhook-id` header: the delivery's id, stable across attempts. */
  readonly id: string
  /** The `webhook-timestamp` header: Unix time in seconds. */
  readonly timestamp: number
  /** The exact request body. */
  readonly body: string
}

/** The HMAC key of a `whsec_…` secret. Throws when it is not one. */
export const secretKey = (secret: string): Buffer => {
  // The library also takes a bare base64 key; we insist on the prefix, so that any other kind of secret is refused.
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error("not a webhook secret (expected whsec_…)")
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), "base64")
  if (key.length === 0) throw new Error("empty webhook secret")
  return key
}

/** The `webhook-signature` header value: `v1,<base64>`. */
export const signWebhook = (input: SignInput): string => {
  // The raw key, so that the library and `secretKey` can never read a secret's base64 differently.
  const webhook = new Webhook(secretKey(input.secret), { format: "raw" })
  return webhook.sign(input.id, new Date(input.timestamp * 1000), input.body)
}

export interface VerifyInput extends SignInput {
  /** The received `webhook-signature` header: one or more space-separated `v1,<base64>` entries. */
  readonly signature: string
  /** When given: reject timestamps further than `toleranceSeconds` from `now` (seconds). */
  readonly now?: number
  readonly toleranceSeconds?: number
}

/**
 * Whether one of the header's `v1` signatures matches (compared in constant time). Not the library's `verify`:
 * that one always holds the timestamp against the wall clock with a fixed five minutes, whereas our receivers
 * choose (or skip) the clock and the tolerance, e.g. to check deliveries recorded earlier.
 */
export const verifyWebhook = (input: VerifyInput): boolean => {
  if (input.now !== undefined) {
    const tolerance = input.toleranceSeconds ?? 300
    if (Math.abs(input.now - input.timestamp) > tolerance) return false
  }
  const expected = Buffer.from(signWebhook(input).slice("v1,".length), "base64")
  let ok = false
  for (const entry of input.signature.split(" ")) {
    const comma = entry.indexOf(",")
    if (comma < 0 || entry.slice(0, comma) !== "v1") continue
    const candidate = Buffer.from(entry.slice(comma + 1), "base64")
    // Every entry is compared, so the time taken does not depend on which one matches.
    if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) ok = true
  }
  return ok
}
