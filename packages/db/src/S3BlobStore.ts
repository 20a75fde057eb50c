import { createReadStream } from "node:fs"
import * as fs from "node:fs/promises"
import { Readable } from "node:stream"
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3"
import { Effect, Layer, Stream } from "effect"
import {
  type BlobEntry,
  BlobNotFound,
  BlobStore,
  type BlobStoreShape,
  DEFAULT_S3_TIMEOUT_MS,
  failingIfMissing,
  normalizeS3Prefix,
  S3_MAX_SINGLE_PUT_BYTES,
  type S3BlobStoreOptions,
} from "./BlobStore.ts"
import { StorageUnavailable } from "./Outage.ts"

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

/** Whether a failed call means the store is out of reach: no answer, a timeout, or a 5xx (a 4xx is ours). */
const isUnreachable = (e: unknown): boolean => {
  const status = statusOf(e)
  return status === undefined || status >= 500 || status === 429
}

const reasonOf = (e: unknown): string => {
  const name = (e as { name?: unknown } | null)?.name
  if (name === "AbortError" || name === "TimeoutError") return "no answer before the deadline"
  const message = e instanceof Error ? e.message : String(e)
  const code = (e as { code?: unknown } | null)?.code
  return typeof code === "string" && !message.includes(code) ? `${code} ${message}` : message || String(code)
}

const isNoSuchKey = (e: unknown): boolean => {
  const name = (e as { name?: unknown } | null)?.name
  return name === "NoSuchKey" || name === "NotFound" || (statusOf(e) === 404 && name !== "NoSuchBucket")
}

/** The client of the store's bucket, its calls bounded by `timeoutMs`. */
const s3Client = (options: S3BlobStoreOptions, timeoutMs: number): S3Client =>
  new S3Client({
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
    // Bounded: a server that does not answer fails the attempt (retried by the SDK) instead of hanging it;
    // the deadline of `send` bounds the attempts together.
    requestHandler: { connectionTimeout: Math.min(10_000, timeoutMs), requestTimeout: timeoutMs },
  })

/** The bucket a store writes to, through its client: what each of its calls needs. */
interface S3Bucket {
  readonly client: S3Client
  readonly bucket: string
  /** Put before every key (empty, or ending with `/`). */
  readonly prefix: string
  readonly timeoutMs: number
}

const objectKey = ({ prefix }: S3Bucket, key: string) => prefix + checkedKey(key)

/**
 * Runs one call under the deadline (`extraMs` more for a large write): its signal aborts the SDK's
 * request, retries included. An unreachable store is `StorageUnavailable`; a missing key `BlobNotFound`.
 */
const send = async <A>(
  { bucket, timeoutMs }: S3Bucket,
  what: string,
  key: string,
  run: (abortSignal: AbortSignal) => Promise<A>,
  extraMs = 0,
): Promise<A> => {
  const deadline = new AbortController()
  const timer = setTimeout(() => deadline.abort(), timeoutMs + extraMs)
  try {
    return await run(deadline.signal)
  } catch (e) {
    if (isNoSuchKey(e)) throw new BlobNotFound({ key })
    if (deadline.signal.aborted || isUnreachable(e))
      throw new StorageUnavailable({
        operation: `S3 ${what} in bucket ${bucket}`,
        key,
        reason: deadline.signal.aborted
          ? `no answer within ${Math.round((timeoutMs + extraMs) / 1000)} s`
          : reasonOf(e),
      })
    throw new Error(`S3 ${what} of ${key} in bucket ${bucket} failed: ${String(e)}`, { cause: e })
  } finally {
    clearTimeout(timer)
  }
}

const getObject = (s3: S3Bucket, key: string, abortSignal: AbortSignal) =>
  s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: objectKey(s3, key) }), { abortSignal })

/** Listing page by page, each page under its own deadline (a listing of a large bucket takes long). */
async function* listAll(s3: S3Bucket, pageSize: number): AsyncGenerator<BlobEntry> {
  const { prefix } = s3
  let token: string | undefined
  do {
    const page = await send(s3, "ListObjectsV2", prefix || "/", (abortSignal) =>
      s3.client.send(
        new ListObjectsV2Command({
          Bucket: s3.bucket,
          MaxKeys: pageSize,
          ...(prefix === "" ? {} : { Prefix: prefix }),
          ...(token === undefined ? {} : { ContinuationToken: token }),
        }),
        { abortSignal },
      ),
    )
    for (const o of page.Contents ?? [])
      if (o.Key?.startsWith(prefix))
        yield { key: o.Key.slice(prefix.length), modifiedAt: o.LastModified ?? new Date(0) }
    token = page.IsTruncated ? page.NextContinuationToken : undefined
  } while (token !== undefined)
}

/** One more second per MB a write sends: a large upload to a distant store is not cut off by the deadline. */
const writeTimeFor = (bytes: number) => Math.ceil(bytes / 1_000_000) * 1000

/** One PutObject of `size` bytes, under the deadline of a write of that size. */
const putObject = (s3: S3Bucket, key: string, body: Uint8Array | Readable, size: number) =>
  send(
    s3,
    "PutObject",
    key,
    (abortSignal) =>
      s3.client.send(
        new PutObjectCommand({ Bucket: s3.bucket, Key: objectKey(s3, key), Body: body, ContentLength: size }),
        { abortSignal },
      ),
    writeTimeFor(size),
  )

/** Whether the bucket can be reached with the client's credentials; the reason when not. */
const checkBucket = ({ client, bucket, timeoutMs }: S3Bucket): Promise<string | undefined> =>
  client
    .send(new HeadBucketCommand({ Bucket: bucket }), { abortSignal: AbortSignal.timeout(timeoutMs) })
    .then(
      () => undefined,
      (e: unknown) => {
        const status = statusOf(e)
        if (status === 404) return `bucket ${bucket} does not exist`
        if (status === 403) return `access to bucket ${bucket} is denied with these credentials`
        return `bucket ${bucket} cannot be reached: ${reasonOf(e)}`
      },
    )

/**
 * An S3-compatible bucket. Each write is one PutObject (or CopyObject), which S3 makes visible whole or
 * not at all once it has stored the object durably, so there are no unfinished writes to sweep; objects
 * are read as streams, and uploads are sent from their spool file without being held in memory.
 */
export const s3BlobStore = (options: S3BlobStoreOptions): S3BlobStore => {
  const timeoutMs = options.timeoutMs ?? DEFAULT_S3_TIMEOUT_MS
  const client = s3Client(options, timeoutMs)
  const s3: S3Bucket = {
    client,
    bucket: options.bucket,
    prefix: normalizeS3Prefix(options.prefix),
    timeoutMs,
  }
  const { bucket } = s3

  return {
    put: (key, bytes) =>
      Effect.promise(() => putObject(s3, key, bytes, bytes.byteLength)).pipe(Effect.asVoid),
    putFile: (key, file) =>
      Effect.promise(async () => {
        const { size } = await fs.stat(file)
        if (size > S3_MAX_SINGLE_PUT_BYTES)
          throw new Error(
            `${file} is larger than the ${S3_MAX_SINGLE_PUT_BYTES} bytes one PutObject may write`,
          )
        await putObject(s3, key, createReadStream(file), size)
        await fs.rm(file, { force: true })
      }),
    copy: (from, to) =>
      failingIfMissing(() =>
        send(s3, "CopyObject", from, (abortSignal) =>
          client.send(
            new CopyObjectCommand({
              Bucket: bucket,
              Key: objectKey(s3, to),
              // The source is `<bucket>/<key>`, URL-encoded (slashes kept).
              CopySource: `${bucket}/${objectKey(s3, from).split("/").map(encodeURIComponent).join("/")}`,
            }),
            { abortSignal },
          ),
        ),
      ).pipe(Effect.asVoid),
    // The deadline covers the answer and its bytes.
    read: (key) =>
      failingIfMissing(() =>
        send(s3, "GetObject", key, async (abortSignal) =>
          (await getObject(s3, key, abortSignal)).Body!.transformToByteArray(),
        ),
      ),
    // The deadline covers the answer's start; then the body streams at the client's pace (a stalled store is
    // cut off by the socket's idle timeout).
    stream: (key) =>
      failingIfMissing(async () => {
        const body = (await send(s3, "GetObject", key, (abortSignal) => getObject(s3, key, abortSignal))).Body
        // In Node the body is the HTTP response (a Readable); anything else is wrapped as one.
        if (body instanceof Readable) return body
        return Readable.fromWeb(body!.transformToWebStream() as import("node:stream/web").ReadableStream)
      }),
    size: (key) =>
      Effect.promise(() =>
        send(s3, "HeadObject", key, (abortSignal) =>
          client.send(new HeadObjectCommand({ Bucket: bucket, Key: objectKey(s3, key) }), { abortSignal }),
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
        send(s3, "DeleteObject", key, (abortSignal) =>
          client.send(new DeleteObjectCommand({ Bucket: bucket, Key: objectKey(s3, key) }), { abortSignal }),
        ).catch((e) => {
          if (!(e instanceof BlobNotFound)) throw e
        }),
      ).pipe(Effect.asVoid),
    list: () =>
      Stream.fromAsyncIterable(listAll(s3, options.listPageSize ?? 1000), (e) => e).pipe(Stream.orDie),
    check: () => checkBucket(s3),
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
