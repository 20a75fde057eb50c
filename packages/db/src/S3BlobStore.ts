import { createReadStream } from "node:fs"
import * as fs from "node:fs/promises"
import { Readable } from "node:stream"
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  paginateListObjectsV2,
  S3Client,
} from "@aws-sdk/client-s3"
import { Effect, Layer, Stream } from "effect"
import {
  type BlobEntry,
  BlobNotFound,
  BlobStore,
  type BlobStoreShape,
  normalizeS3Prefix,
  S3_MAX_SINGLE_PUT_BYTES,
  type S3BlobStoreOptions,
} from "./BlobStore.ts"

/** A blob store in a bucket, and the client to let go of when the process stops. */
export interface S3BlobStore extends BlobStoreShape {
  /** Whether the bucket can be reached with these credentials (a start-up check); the reason when not. */
  readonly check: () => Promise<string | undefined>
  readonly close: () => void
}

/** Keys as `documentBlobKey` writes them: relative, no empty, `.` or `..` segment (as the directory store). */
const checkedKey = (key: string): string => {
  if (key === "" || key.split("/").some((s) => s === "" || s === "." || s === ".."))
    throw new Error(`invalid blob key ${key}`)
  return key
}

const statusOf = (e: unknown): number | undefined =>
  (e as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode

const isNoSuchKey = (e: unknown): boolean => {
  const name = (e as { name?: unknown } | null)?.name
  return name === "NoSuchKey" || name === "NotFound" || (statusOf(e) === 404 && name !== "NoSuchBucket")
}

/**
 * An S3-compatible bucket. Each write is one PutObject (or CopyObject), which S3 makes visible whole or
 * not at all once it has stored the object durably, so there are no unfinished writes to sweep; objects
 * are read as streams, and uploads are sent from their spool file without being held in memory.
 */
export const s3BlobStore = (options: S3BlobStoreOptions): S3BlobStore => {
  const prefix = normalizeS3Prefix(options.prefix)
  const bucket = options.bucket
  const client = new S3Client({
    region: options.region,
    ...(options.endpoint !== undefined
      ? {
          endpoint: options.endpoint,
          forcePathStyle: options.forcePathStyle ?? true,
          // Many S3-compatible servers do not take the SDK's default trailing checksums (aws-chunked
          // uploads): sent only where the operation requires one.
          requestChecksumCalculation: "WHEN_REQUIRED" as const,
          responseChecksumValidation: "WHEN_REQUIRED" as const,
        }
      : { forcePathStyle: options.forcePathStyle ?? false }),
    ...(options.credentials !== undefined ? { credentials: options.credentials } : {}),
    // Bounded: a server that does not answer fails the request (retried by the SDK) instead of hanging it.
    requestHandler: { connectionTimeout: 10_000, requestTimeout: 120_000 },
  })
  const objectKey = (key: string) => prefix + checkedKey(key)

  const send = <A>(what: string, key: string, run: () => Promise<A>): Promise<A> =>
    run().catch((e: unknown) => {
      if (isNoSuchKey(e)) throw new BlobNotFound(key)
      throw new Error(`S3 ${what} of ${key} in bucket ${bucket} failed: ${String(e)}`, { cause: e })
    })

  const get = (key: string) =>
    send("GetObject", key, () => client.send(new GetObjectCommand({ Bucket: bucket, Key: objectKey(key) })))

  async function* listAll(): AsyncGenerator<BlobEntry> {
    const pages = paginateListObjectsV2(
      { client, pageSize: options.listPageSize ?? 1000 },
      { Bucket: bucket, ...(prefix === "" ? {} : { Prefix: prefix }) },
    )
    for await (const page of pages)
      for (const o of page.Contents ?? [])
        if (o.Key?.startsWith(prefix))
          yield { key: o.Key.slice(prefix.length), modifiedAt: o.LastModified ?? new Date(0) }
  }

  return {
    put: (key, bytes) =>
      Effect.promise(() =>
        send("PutObject", key, () =>
          client.send(
            new PutObjectCommand({
              Bucket: bucket,
              Key: objectKey(key),
              Body: bytes,
              ContentLength: bytes.byteLength,
            }),
          ),
        ),
      ).pipe(Effect.asVoid),
    putFile: (key, file) =>
      Effect.promise(async () => {
        const { size } = await fs.stat(file)
        if (size > S3_MAX_SINGLE_PUT_BYTES)
          throw new Error(
            `${file} is larger than the ${S3_MAX_SINGLE_PUT_BYTES} bytes one PutObject may write`,
          )
        await send("PutObject", key, () =>
          client.send(
            new PutObjectCommand({
              Bucket: bucket,
              Key: objectKey(key),
              Body: createReadStream(file),
              ContentLength: size,
            }),
          ),
        )
        await fs.rm(file, { force: true })
      }),
    copy: (from, to) =>
      Effect.promise(() =>
        send("CopyObject", from, () =>
          client.send(
            new CopyObjectCommand({
              Bucket: bucket,
              Key: objectKey(to),
              // The source is `<bucket>/<key>`, URL-encoded (slashes kept).
              CopySource: `${bucket}/${objectKey(from).split("/").map(encodeURIComponent).join("/")}`,
            }),
          ),
        ),
      ).pipe(Effect.asVoid),
    read: (key) =>
      Effect.promise(async () => {
        const answer = await get(key)
        return send("GetObject", key, () => answer.Body!.transformToByteArray())
      }),
    stream: (key) =>
      Effect.promise(async () => {
        const body = (await get(key)).Body
        // In Node the body is the HTTP response (a Readable); anything else is wrapped as one.
        if (body instanceof Readable) return body
        return Readable.fromWeb(body!.transformToWebStream() as import("node:stream/web").ReadableStream)
      }),
    size: (key) =>
      Effect.promise(() =>
        send("HeadObject", key, () =>
          client.send(new HeadObjectCommand({ Bucket: bucket, Key: objectKey(key) })),
        ).then(
          (head) => head.ContentLength ?? 0,
          (e) => {
            if (e instanceof BlobNotFound) return undefined
            throw e
          },
        ),
      ),
    // S3 answers 204 for a key that is not there: removing twice is fine.
    remove: (key) =>
      Effect.promise(() =>
        send("DeleteObject", key, () =>
          client.send(new DeleteObjectCommand({ Bucket: bucket, Key: objectKey(key) })),
        ).catch((e) => {
          if (!(e instanceof BlobNotFound)) throw e
        }),
      ).pipe(Effect.asVoid),
    list: () => Stream.fromAsyncIterable(listAll(), (e) => e).pipe(Stream.orDie),
    check: () =>
      client.send(new HeadBucketCommand({ Bucket: bucket })).then(
        () => undefined,
        (e: unknown) => {
          const status = statusOf(e)
          if (status === 404) return `bucket ${bucket} does not exist`
          if (status === 403) return `access to bucket ${bucket} is denied with these credentials`
          return `bucket ${bucket} cannot be reached: ${e instanceof Error ? e.message : String(e)}`
        },
      ),
    close: () => client.destroy(),
  }
}

/** The store as a layer; its client is let go of with the layer. */
export const s3BlobStoreLayer = (options: S3BlobStoreOptions) =>
  Layer.scoped(
    BlobStore,
    Effect.acquireRelease(
      Effect.sync(() => s3BlobStore(options)),
      (store) => Effect.sync(() => store.close()),
    ),
  )
