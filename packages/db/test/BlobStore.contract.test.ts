import { createHash, randomBytes, randomUUID } from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import type { Readable } from "node:stream"
import { startTestS3Server, type TestS3Server } from "@dxs/testing/TestS3Server"
import { Cause, Chunk, Effect, Exit, Option, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BlobNotFound, type BlobStoreShape, fileBlobStore, isBlobNotFound } from "../src/BlobStore.ts"
import { s3BlobStore } from "../src/S3BlobStore.ts"

/**
 * One contract, two stores: what the services rely on (uploads, downloads, page images, copies, deletion,
 * the orphan sweep) holds for the directory store and for an S3 bucket on a real S3-protocol server.
 */

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

/** The failure an effect ended with, in its error channel (the test fails if it succeeded or died). */
const failureOf = async <E>(effect: Effect.Effect<unknown, E>) => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) throw new Error("expected the effect to fail")
  return Option.getOrThrowWith(Cause.failureOption(exit.cause), () => Cause.squash(exit.cause))
}

const drain = async (stream: Readable) => {
  const chunks: Array<Buffer> = []
  for await (const c of stream) chunks.push(c as Buffer)
  return { bytes: Buffer.concat(chunks), chunks: chunks.length }
}

const listed = async (store: BlobStoreShape) =>
  Chunk.toReadonlyArray(await run(Stream.runCollect(store.list()))).toSorted((a, b) =>
    a.key.localeCompare(b.key),
  )

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")

/** A key in dxs's layout: `<project>/<document>/v<n>/<name>`. */
const docKey = (name: string) => `${randomUUID()}/${randomUUID()}/v1/${name}`

interface Subject {
  readonly name: string
  /** A fresh, empty store. */
  readonly make: () => Promise<BlobStoreShape>
}

let s3: TestS3Server
const scratch: Array<string> = []
beforeAll(async () => {
  s3 = await startTestS3Server()
})
afterAll(async () => {
  await s3?.stop()
  for (const dir of scratch) await fs.rm(dir, { recursive: true, force: true })
})

const subjects: ReadonlyArray<Subject> = [
  {
    name: "file system",
    make: async () => {
      const dir = await fs.mkdtemp(path.join(os.tmpdir(), "dxs-blob-contract-"))
      scratch.push(dir)
      return fileBlobStore(dir)
    },
  },
  {
    name: "S3 (s3rver on loopback)",
    // A prefix of its own per store: each starts empty in the shared bucket. Small listing pages, so
    // that listing goes over several requests.
    make: async () => s3BlobStore({ ...s3.options(`contract/${randomUUID()}`), listPageSize: 3 }),
  },
]

describe.each(subjects)("blob store contract: $name", ({ make }) => {
  it("stores bytes and reads them back, whole and as a stream of several chunks", async () => {
    const store = await make()
    const key = docKey("large.bin")
    const bytes = randomBytes(3 * 1024 * 1024 + 17)
    await run(store.put(key, bytes))
    expect(sha(await run(store.read(key)))).toBe(sha(bytes))
    const streamed = await drain(await run(store.stream(key)))
    expect(streamed.bytes.length).toBe(bytes.length)
    expect(sha(streamed.bytes)).toBe(sha(bytes))
    expect(streamed.chunks).toBeGreaterThan(1)
    expect(await run(store.size(key))).toBe(bytes.length)
  })

  it("moves a spooled file into the store: the object has its bytes and the file is gone", async () => {
    const store = await make()
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "dxs-blob-spool-"))
    scratch.push(dir)
    const file = path.join(dir, "upload")
    const bytes = randomBytes(2 * 1024 * 1024 + 5)
    await fs.writeFile(file, bytes)
    const key = docKey("upload.pdf")
    await run(store.putFile(key, file))
    await expect(fs.stat(file)).rejects.toMatchObject({ code: "ENOENT" })
    expect(await run(store.size(key))).toBe(bytes.length)
    expect(sha((await drain(await run(store.stream(key)))).bytes)).toBe(sha(bytes))
  })

  it("overwrites an object whole", async () => {
    const store = await make()
    const key = docKey("pages/1.png")
    await run(store.put(key, new TextEncoder().encode("first, longer version")))
    await run(store.put(key, new TextEncoder().encode("second")))
    expect(new TextDecoder().decode(await run(store.read(key)))).toBe("second")
    expect(await run(store.size(key))).toBe(6)
  })

  it("copies an object, leaving the source as it was", async () => {
    const store = await make()
    const from = docKey("source.pdf")
    const to = docKey("copy.pdf")
    const bytes = randomBytes(300_000)
    await run(store.put(from, bytes))
    await run(store.copy(from, to))
    expect(sha(await run(store.read(to)))).toBe(sha(bytes))
    expect(sha(await run(store.read(from)))).toBe(sha(bytes))
  })

  it("tells a missing key clearly: size undefined, and read, stream and copy fail with a not-found", async () => {
    const store = await make()
    const key = docKey("never-written.pdf")
    expect(await run(store.size(key))).toBeUndefined()
    for (const effect of [store.read(key), store.stream(key), store.copy(key, docKey("x.pdf"))]) {
      const failure = await failureOf(effect)
      expect(failure).toBeInstanceOf(BlobNotFound)
      expect(isBlobNotFound(failure)).toBe(true)
      expect(failure).toMatchObject({ _tag: "BlobNotFound", key, message: `no stored object at ${key}` })
    }
  })

  it("removes an object; removing it again, or a key never written, succeeds", async () => {
    const store = await make()
    const key = docKey("gone.pdf")
    await run(store.put(key, new Uint8Array([1, 2, 3])))
    expect(await run(store.size(key))).toBe(3)
    await run(store.remove(key))
    expect(await run(store.size(key))).toBeUndefined()
    await run(store.remove(key))
    await run(store.remove(docKey("never.pdf")))
    expect(await failureOf(store.read(key))).toBeInstanceOf(BlobNotFound)
    expect(await listed(store)).toEqual([])
  })

  it("lists every object with its relative key and when it was written, as the orphan sweep reads it", async () => {
    const store = await make()
    expect(await listed(store)).toEqual([])
    const keys = [docKey("a.pdf"), docKey("b.pdf"), docKey("c.pdf")]
    keys.push(keys[0]!.replace(/a\.pdf$/, "pages/1.png"), keys[0]!.replace(/a\.pdf$/, "pages/2.png"))
    const before = Date.now()
    for (const k of keys) await run(store.put(k, new TextEncoder().encode(k)))
    const entries = await listed(store)
    expect(entries.map((e) => e.key)).toEqual(keys.toSorted((a, b) => a.localeCompare(b)))
    for (const e of entries) {
      expect(e.modifiedAt).toBeInstanceOf(Date)
      // Second precision on some servers; an hour of slack says only that it is the write's time.
      expect(Math.abs(e.modifiedAt.getTime() - before)).toBeLessThan(3_600_000)
    }
    await run(store.remove(keys[1]!))
    expect((await listed(store)).map((e) => e.key)).not.toContain(keys[1])
  })

  it("keeps keys with Unicode, spaces and URL-special characters as they are", async () => {
    const store = await make()
    const folder = docKey("")
    // No `&`, `<` or `>`: s3rver escapes them twice in listings (real S3 does not; dxs's keys never have them).
    const names = ["Übersicht – März 2024.pdf", "文件 名.pdf", "ça + 100% = more?#;.pdf", "emoji 📄.png"]
    for (const [i, name] of names.entries()) await run(store.put(folder + name, new Uint8Array([i])))
    for (const [i, name] of names.entries()) {
      expect(await run(store.size(folder + name))).toBe(1)
      expect([...(await run(store.read(folder + name)))]).toEqual([i])
    }
    await run(store.copy(folder + names[0]!, `${folder}kopie ${names[0]!}`))
    expect((await listed(store)).map((e) => e.key).toSorted()).toEqual(
      [...names, `kopie ${names[0]!}`].map((n) => folder + n).toSorted(),
    )
    await run(store.remove(folder + names[1]!))
    expect(await run(store.size(folder + names[1]!))).toBeUndefined()
  })

  it("refuses keys that would leave the store", async () => {
    const store = await make()
    for (const key of ["../outside", "a/../../b", "/absolute"])
      await expect(run(store.put(key, new Uint8Array([1])))).rejects.toThrow(/invalid blob key/)
  })
})

describe("S3 blob store", () => {
  it("puts every key under S3_PREFIX and lists keys without it", async () => {
    const prefix = `tenant-${randomUUID()}`
    const store = s3BlobStore(s3.options(`/${prefix}/`))
    const whole = s3BlobStore(s3.options())
    const key = docKey("a.pdf")
    await run(store.put(key, new Uint8Array([7])))
    expect((await listed(store)).map((e) => e.key)).toEqual([key])
    expect((await listed(whole)).map((e) => e.key)).toContain(`${prefix}/${key}`)
    expect([...(await run(whole.read(`${prefix}/${key}`)))]).toEqual([7])
    store.close()
    whole.close()
  })

  it("checks the bucket at start: a missing bucket or unknown credentials are named", async () => {
    expect(await s3BlobStore(s3.options()).check()).toBeUndefined()
    expect(await s3BlobStore({ ...s3.options(), bucket: "no-such-bucket" }).check()).toMatch(
      /bucket no-such-bucket does not exist/,
    )
    const wrong = s3BlobStore({
      ...s3.options(),
      credentials: { accessKeyId: "NOT-A-KEY", secretAccessKey: "S3RVER" },
    })
    expect(await wrong.check()).toMatch(/access to bucket dxs-test is denied/)
  })
})
