/**
 * Secrets at rest: AES-256-GCM with a random 96-bit IV per value. Stored form: `v1:<iv>:<tag>:<data>`,
 * each part base64url. Decrypting with another key, or a tampered value, fails.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"

const VERSION = "v1"

const keyOf = (key: Uint8Array): Buffer => {
  if (key.length !== 32) throw new Error("the encryption key must be 32 bytes")
  return Buffer.from(key)
}

export const encryptSecret = (key: Uint8Array, plaintext: string): string => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", keyOf(key), iv)
  const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
  const tag = cipher.getAuthTag()
  return [VERSION, iv.toString("base64url"), tag.toString("base64url"), data.toString("base64url")].join(":")
}

export const decryptSecret = (key: Uint8Array, stored: string): string => {
  const [version, iv, tag, data] = stored.split(":")
  if (version !== VERSION || iv === undefined || tag === undefined || data === undefined)
    throw new Error("not an encrypted value")
  const decipher = createDecipheriv("aes-256-gcm", keyOf(key), Buffer.from(iv, "base64url"))
  decipher.setAuthTag(Buffer.from(tag, "base64url"))
  return Buffer.concat([decipher.update(Buffer.from(data, "base64url")), decipher.final()]).toString("utf8")
}

/** A key from configuration: 64 hex digits or base64 of 32 bytes. Undefined when neither. */
export const parseEncryptionKey = (text: string): Uint8Array | undefined => {
  const t = text.trim()
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, "hex")
  const b = Buffer.from(t, "base64")
  return b.length === 32 && /^[A-Za-z0-9+/_-]+=*$/.test(t) ? b : undefined
}

export const newEncryptionKey = (): Uint8Array => randomBytes(32)
