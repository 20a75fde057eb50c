/**
 * The key that signs documents' `file_url` links: one for every process sharing the database, kept in
 * `server_secrets` encrypted with the deployment's encryption key (AES-256-GCM, the scheme and key of
 * webhook secrets), so a copy of the database alone cannot forge download links.
 */
import { randomBytes } from "node:crypto"
import { withDb } from "@dxs/db"
import * as ServerSecrets from "@dxs/db/repositories/ServerSecrets"
import { decryptSecret, encryptSecret } from "@dxs/pipeline/webhooks/Encryption"
import { Effect } from "effect"

const NAME = "file_url_signing_key"

/** Encrypted values are `v1:…`; a key stored in clear by an earlier version is base64url, without colons. */
const isEncrypted = (value: string) => value.startsWith("v1:")

/**
 * The signing key, created by the first process that asks. A key stored in clear is encrypted in place on
 * first use (the same key, so links signed before stay valid). A key this process cannot decrypt is a
 * configuration error, never replaced: that would break every link the other processes sign.
 */
export const loadFileUrlSigningKey = (encryptionKey: Uint8Array) =>
  withDb((db) =>
    Effect.gen(function* () {
      yield* ServerSecrets.insertSecretIfMissing(
        db,
        NAME,
        encryptSecret(encryptionKey, randomBytes(32).toString("base64url")),
      )
      const value = yield* ServerSecrets.findSecret(db, NAME)
      if (value === undefined) return yield* Effect.die(new Error(`the server secret ${NAME} is missing`))
      if (!isEncrypted(value)) {
        // Only if still in clear: another process may have encrypted it meanwhile (the same key either way).
        yield* ServerSecrets.replaceSecret(db, NAME, value, encryptSecret(encryptionKey, value))
        return Buffer.from(value, "base64url")
      }
      let clear: string
      try {
        clear = decryptSecret(encryptionKey, value)
      } catch {
        return yield* Effect.die(
          new Error(
            "the file-URL signing key in the database cannot be decrypted with this process's encryption key: " +
              "every dxs process sharing the database must use the same DXS_ENCRYPTION_KEY (or DATA_DIR/encryption.key)",
          ),
        )
      }
      return Buffer.from(clear, "base64url")
    }),
  )
