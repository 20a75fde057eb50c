/**
 * What a service's layer and its methods need: `X.Default` only the storage (the services it calls come
 * with it), and a method only the request scope. Once the layer is built over a real database, a method's
 * effect runs with nothing but `CurrentOrganization` provided (a method that acts for no organisation,
 * with nothing at all).
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { type BlobStore, Db } from "@dxs/db"
import { useTestDatabase } from "@dxs/testing/TestDatabase"
import { it as effect } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, type Stream } from "effect"
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest"
import { ApiKeys } from "../src/ApiKeys.ts"
import { CurrentOrganization } from "../src/CurrentOrganization.ts"
import type { Documents } from "../src/Documents.ts"
import { Folders } from "../src/Folders.ts"
import { storageLayer } from "../src/Layers.ts"
import type { ProgressFeed } from "../src/ProgressFeed.ts"
import { Projects } from "../src/Projects.ts"

let dbUrl: string
let blobDir: string

beforeAll(async () => {
  dbUrl = await useTestDatabase()
  blobDir = await fs.mkdtemp(path.join(os.tmpdir(), "dxs-service-scope-"))
})

afterAll(async () => {
  if (blobDir) await fs.rm(blobDir, { recursive: true, force: true })
})

describe("a service's scope", () => {
  it("X.Default needs only the storage; a method needs only the request scope", () => {
    expectTypeOf<Layer.Layer.Context<typeof Projects.Default>>().toEqualTypeOf<Db | BlobStore>()
    expectTypeOf<Layer.Layer.Context<typeof ApiKeys.Default>>().toEqualTypeOf<Db>()
    // ProgressFeed calls Projects, Launches and LiveSubscriptions: its Default brings them along.
    expectTypeOf<Layer.Layer.Context<typeof ProgressFeed.Default>>().toEqualTypeOf<Db | BlobStore>()

    expectTypeOf<Effect.Effect.Context<ReturnType<Projects["create"]>>>().toEqualTypeOf<CurrentOrganization>()
    expectTypeOf<
      Effect.Effect.Context<ReturnType<Documents["upload"]>>
    >().toEqualTypeOf<CurrentOrganization>()
    expectTypeOf<
      Stream.Stream.Context<ReturnType<ProgressFeed["subscribe"]>>
    >().toEqualTypeOf<CurrentOrganization>()
    expectTypeOf<Effect.Effect.Context<ReturnType<ApiKeys["create"]>>>().toEqualTypeOf<never>()
  })

  it("runs a method's effect with only CurrentOrganization provided once the layer is built", async () => {
    const runtime = ManagedRuntime.make(
      Layer.merge(Projects.Default, ApiKeys.Default).pipe(Layer.provide(storageLayer({ dbUrl, blobDir }))),
    )
    try {
      const projects = await runtime.runPromise(Projects)
      const keys = await runtime.runPromise(ApiKeys)
      // Run on the default runtime: neither the database nor the blob store is in reach but the layer's.
      const created = await Effect.runPromise(keys.create("service-scope"))
      const organization = await Effect.runPromise(keys.authenticate(created.key))
      const asOrganization = Effect.provideService(CurrentOrganization, organization)
      const project = await Effect.runPromise(asOrganization(projects.create({ name: "Scoped" })))
      expect(project.name).toBe("Scoped")
      const listed = await Effect.runPromise(asOrganization(projects.list({ _tag: "All" })))
      expect(listed.map((p) => p.id)).toEqual([project.id])
      await Effect.runPromise(asOrganization(projects.remove(project.id)))
      expect(await Effect.runPromise(asOrganization(projects.list({ _tag: "All" })))).toEqual([])
    } finally {
      await runtime.dispose()
    }
  })

  effect.scoped(
    "X.Default stands alone over the test database: no composition of every service around it",
    () =>
      Effect.gen(function* () {
        const [folders, keys] = yield* Effect.all([Folders, ApiKeys]).pipe(
          Effect.provide(
            Layer.merge(Folders.Default, ApiKeys.Default).pipe(Layer.provide(Db.layer(dbUrl, 2))),
          ),
        )
        const organization = yield* keys.authenticate((yield* keys.create("default-alone")).key)
        const folder = yield* folders
          .create({ name: "Alone" })
          .pipe(Effect.provideService(CurrentOrganization, organization))
        expect(folder.name).toBe("Alone")
        const listed = yield* folders.list().pipe(Effect.provideService(CurrentOrganization, organization))
        expect(listed.map((f) => f.id)).toEqual([folder.id])
      }),
  )
})
