import { spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import type { S3BlobStoreOptions } from "@dxs/db/BlobStore"

/**
 * The server process: s3rver on a free loopback port, its port on the first line of stdout; it ends when
 * its standard input closes (the test process ended, however). A process of its own because s3rver's
 * listing continuation tokens use DES, which Node's OpenSSL 3 has only with --openssl-legacy-provider.
 */
const SERVER = `
const S3rver = require(process.env.S3RVER_MODULE)
const server = new S3rver({
  address: "127.0.0.1",
  port: 0,
  silent: true,
  directory: process.env.S3RVER_DIRECTORY,
  // s3rver signs bucket-level requests' path as /<bucket> where the SDK signs /<bucket>/ (listing,
  // HeadBucket): their signatures never match. The access key is still checked.
  allowMismatchedSignatures: true,
  configureBuckets: [{ name: process.env.S3RVER_BUCKET }],
})
server.run().then(({ port }) => console.log(JSON.stringify({ port })))
process.stdin.on("end", () => process.exit(0)).resume()
process.on("SIGTERM", () => server.close().finally(() => process.exit(0)))
`

export interface TestS3Server {
  /**
   * The settings of a store in this server's bucket (path-style, its fixed credentials), reached at `port`
   * (default: the server's own; a `TcpProxy`'s in front of it for outages).
   */
  readonly options: (prefix?: string, port?: number) => S3BlobStoreOptions
  /** The server's loopback port. */
  readonly port: number
  /** The directory the server keeps its buckets in. */
  readonly directory: string
  readonly stop: () => Promise<void>
}

/**
 * A real S3-protocol server (s3rver: access keys checked, objects on disk) in a process of its own on a
 * free loopback port, with one empty bucket. For tests only.
 */
export const startTestS3Server = async (bucket = "dxs-test"): Promise<TestS3Server> => {
  const directory = await fs.mkdtemp(path.join(os.tmpdir(), "dxs-s3rver-"))
  const child = spawn(process.execPath, ["--openssl-legacy-provider", "-e", SERVER], {
    env: {
      ...process.env,
      S3RVER_MODULE: createRequire(import.meta.url).resolve("@20minutes/s3rver"),
      S3RVER_DIRECTORY: directory,
      S3RVER_BUCKET: bucket,
    },
    stdio: ["pipe", "pipe", "inherit"],
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const port = await new Promise<number>((resolve, reject) => {
    let out = ""
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString("utf8")
      const line = out.split("\n")[0]
      if (out.includes("\n")) resolve((JSON.parse(line!) as { port: number }).port)
    })
    child.once("exit", (code) => reject(new Error(`s3rver exited with ${code} before listening`)))
  })
  return {
    directory,
    port,
    options: (prefix, via = port) => ({
      bucket,
      region: "us-east-1",
      endpoint: `http://127.0.0.1:${via}`,
      forcePathStyle: true,
      prefix,
      // s3rver's only account.
      credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    }),
    stop: async () => {
      child.kill("SIGTERM")
      await exited
      await fs.rm(directory, { recursive: true, force: true })
    },
  }
}
