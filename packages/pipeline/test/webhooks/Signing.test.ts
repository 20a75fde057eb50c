import { createHmac, randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import { secretKey, signWebhook, verifyWebhook } from "../../src/webhooks/Signing.ts"

/** The expected signature, computed here from the scheme's definition rather than by the module. */
const expected = (keyBytes: Buffer, id: string, timestamp: number, body: string) =>
  `v1,${createHmac("sha256", keyBytes).update(`${id}.${timestamp}.${body}`).digest("base64")}`

describe("webhook signatures", () => {
  const keyBytes = Buffer.from("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "hex")
  const secret = `whsec_${keyBytes.toString("base64")}`
  const id = "6a1b8b0e-5b1f-4d55-9d0e-8f2f3c4a5b6c"
  const timestamp = 1_767_225_600
  const body = JSON.stringify({ id: "x", event: "webhook.ping", data: { message: "héllo ✓" } })

  it("signs id.timestamp.body with HMAC-SHA256 keyed by the secret's base64 part", () => {
    expect(signWebhook({ secret, id, timestamp, body })).toBe(expected(keyBytes, id, timestamp, body))
    for (let i = 0; i < 20; i++) {
      const key = randomBytes(24 + i)
      const s = `whsec_${key.toString("base64")}`
      const b = randomBytes(i * 13).toString("hex")
      expect(signWebhook({ secret: s, id: `msg_${i}`, timestamp: timestamp + i, body: b })).toBe(
        expected(key, `msg_${i}`, timestamp + i, b),
      )
    }
  })

  it("a fixed vector (computed with openssl dgst -sha256 -mac HMAC -macopt hexkey:00…1f)", () => {
    expect(signWebhook({ secret, id: "msg_1", timestamp: 1_700_000_000, body: '{"a":1}' })).toBe(
      "v1,AMaOha7DUT/0J0JMycRuYOBSvbx3WtwLd2khXXbaVj4=",
    )
  })

  it("verifies a matching signature, among several, and rejects any change", () => {
    const signature = signWebhook({ secret, id, timestamp, body })
    expect(verifyWebhook({ secret, id, timestamp, body, signature })).toBe(true)
    expect(verifyWebhook({ secret, id, timestamp, body, signature: `v1,AAAA ${signature}` })).toBe(true)
    expect(verifyWebhook({ secret, id, timestamp, body: `${body} `, signature })).toBe(false)
    expect(verifyWebhook({ secret, id: `${id}x`, timestamp, body, signature })).toBe(false)
    expect(verifyWebhook({ secret, id, timestamp: timestamp + 1, body, signature })).toBe(false)
    const other = `whsec_${randomBytes(32).toString("base64")}`
    expect(verifyWebhook({ secret: other, id, timestamp, body, signature })).toBe(false)
    expect(verifyWebhook({ secret, id, timestamp, body, signature: signature.replace("v1,", "v2,") })).toBe(
      false,
    )
    expect(verifyWebhook({ secret, id, timestamp, body, signature: "garbage" })).toBe(false)
    expect(verifyWebhook({ secret, id, timestamp, body, signature: "" })).toBe(false)
  })

  it("rejects timestamps outside the tolerance when the current time is given", () => {
    const signature = signWebhook({ secret, id, timestamp, body })
    expect(verifyWebhook({ secret, id, timestamp, body, signature, now: timestamp + 299 })).toBe(true)
    expect(verifyWebhook({ secret, id, timestamp, body, signature, now: timestamp + 301 })).toBe(false)
    expect(verifyWebhook({ secret, id, timestamp, body, signature, now: timestamp - 301 })).toBe(false)
    expect(
      verifyWebhook({ secret, id, timestamp, body, signature, now: timestamp + 600, toleranceSeconds: 900 }),
    ).toBe(true)
  })

  it("refuses secrets that are not whsec_ ones", () => {
    expect(() => secretKey("sk_abc")).toThrow(/whsec_/)
    expect(() => secretKey("whsec_")).toThrow(/empty/)
    expect(secretKey(secret)).toEqual(keyBytes)
  })
})
