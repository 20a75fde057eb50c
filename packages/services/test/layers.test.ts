/**
 * The one composition of the services: the settings an entry point gives become the references the
 * services read (read when the layer is built when they are effects), the unset ones keep their defaults,
 * and the services run over the storage it names or is handed.
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { BlobStore, Db, fileBlobStore } from "@dxs/db"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { Context, Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ApiKeys } from "../src/ApiKeys.ts"
import { FileLinks, PublicUrl, UploadLimits } from "../src/Documents.ts"
import { RequestLimits } from "../src/HttpLimits.ts"
import { servicesLayer, settingsLayer } from "../src/Layers.ts"
import { LiveSubscriptionSettings } from "../src/LiveSubscriptions.ts"
import { SessionSettings } from "../src/Members.ts"
import { AppUrl } from "../src/OutputSchemas.ts"
import { AuthThrottleSettings, RateLimitSettings } from "../src/RateLimits.ts"

let dbUrl: string
let blobDir: string

beforeAll(async () => {
  dbUrl = await useTestDatabase()
  blobDir = await fs.mkdtemp(path.join(os.tmpdir(), "dxs-layers-"))
})

afterAll(async () => {
  if (blobDir) await fs.rm(blobDir, { recursive: true, force: true })
})

class Port extends Context.Tag("test/Port")<Port, number>() {}

const settingsOf = Effect.all({
  publicUrl: PublicUrl,
  appUrl: AppUrl,
  rate: RateLimitSettings,
  throttle: AuthThrottleSettings,
  subscriptions: LiveSubscriptionSettings,
  upload: UploadLimits,
  session: SessionSettings,
  limits: RequestLimits,
  links: FileLinks,
})

describe("the composition of the services", () => {
  it("sets the settings given, read from effects when built, and leaves the others at their defaults", async () => {
    const given = settingsLayer({
      dbUrl: "unused",
      blobDir: "unused",
      publicUrl: Effect.map(Port, (port) => `http://127.0.0.1:${port}`),
      appUrl: "https://app.example",
      rateLimitPerMinute: 7,
      authThrottle: { signInAttemptsPerMinute: 3, authFailuresPerMinute: 4 },
      uploadMaxBytes: 1234,
      sessionTtlSeconds: 60,
      fileUrlTtlSeconds: 90,
    }).pipe(Layer.provide(Layer.succeed(Port, 8123)))
    const set = await Effect.runPromise(Effect.provide(settingsOf, given))
    expect(set).toEqual({
      publicUrl: "http://127.0.0.1:8123",
      appUrl: "https://app.example",
      rate: { perMinute: 7 },
      throttle: { signInAttemptsPerMinute: 3, authFailuresPerMinute: 4 },
      subscriptions: LiveSubscriptionSettings.defaultValue(),
      upload: { maxFileBytes: 1234 },
      session: { ttlSeconds: 60 },
      limits: RequestLimits.defaultValue(),
      links: { ttlSeconds: 90 },
    })
    const defaults = await Effect.runPromise(
      Effect.provide(settingsOf, settingsLayer({ dbUrl: "unused", blobDir: "unused" })),
    )
    expect(defaults).toEqual(await Effect.runPromise(settingsOf))
  })

  it("runs the services over a pool on dbUrl and the directory blobDir, or over the storage handed in", async () => {
    const own = ManagedRuntime.make(servicesLayer({ dbUrl, blobDir, rateLimitPerMinute: 5 }))
    try {
      const created = await own.runPromise(Effect.flatMap(ApiKeys, (keys) => keys.create("layers")))
      const org = await own.runPromise(Effect.flatMap(ApiKeys, (keys) => keys.authenticate(created.key)))
      expect(org.name).toBe("layers")
      expect(await own.runPromise(Effect.map(Db, (db) => db.url))).toBe(dbUrl)
      expect(await own.runPromise(RateLimitSettings)).toEqual({ perMinute: 5 })
    } finally {
      await own.dispose()
    }
    const blobs = fileBlobStore(blobDir)
    const handed = ManagedRuntime.make(
      Layer.unwrapEffect(
        Effect.map(Db, (db) => servicesLayer({ dbUrl: "unused", db: Layer.succeed(Db, db), blobDir, blobs })),
      ).pipe(Layer.provide(Db.layer(dbUrl, 1))),
    )
    try {
      expect(await handed.runPromise(Effect.map(Db, (db) => db.url))).toBe(dbUrl)
      expect(await handed.runPromise(BlobStore)).toBe(blobs)
      const listed = await handed.runPromise(Effect.flatMap(ApiKeys, (keys) => keys.list("layers")))
      expect(listed).toHaveLength(1)
    } finally {
      await handed.dispose()
    }
  })
})
