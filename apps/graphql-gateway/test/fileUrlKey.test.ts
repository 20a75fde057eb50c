/**
 * The key that signs documents' `file_url` links is stored encrypted with the deployment's encryption key
 * (as webhook secrets are): a link that one process signs verifies in another sharing the database and the
 * key, a key stored in clear by an older version is encrypted on first use with its links still valid, and
 * a process with another encryption key refuses to sign rather than replacing the key.
 */
import { createHmac, randomBytes } from "node:crypto"
import { decryptSecret } from "@dxs/pipeline/webhooks/Encryption"
import { onePagePdf } from "@dxs/testing/Documents"
import { type Client, createProject } from "@dxs/testing/RestClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type GraphqlServer, startGraphqlServer } from "../src/index.ts"
import { call, type Gateway, ok, startGateway, upload, withDb } from "./support.ts"

const SECRET = "file_url_signing_key"

const storedValue = (gateway: Gateway) =>
  withDb(gateway.api, (db) =>
    db.selectFrom("server_secrets").select("value").where("name", "=", SECRET).executeTakeFirst(),
  ).then((row) => row?.value)

const fileUrlsOf = async (gateway: Gateway | GraphqlServer, key: string, projectId: string) =>
  call(gateway, key, `query ($p: ID!) { project(id: $p) { documents { id file_url } } }`, { p: projectId })

const download = (url: string) =>
  fetch(url).then(async (r) => ({ status: r.status, bytes: new Uint8Array(await r.arrayBuffer()) }))

describe("the file-URL signing key", () => {
  const KEY = randomBytes(32)
  let gql: Gateway
  let key: string
  let a: Client

  beforeAll(async () => {
    gql = await startGateway({ webhookKey: KEY })
    key = await gql.api.newKey("acme")
    a = gql.api.client(key)
  })

  afterAll(async () => {
    await gql?.close()
  })

  it("is created encrypted; a link the gateway signs is accepted by the REST API", async () => {
    const projectId = await createProject(a)
    const bytes = onePagePdf("signed by the gateway")
    await upload(a, projectId, "one.pdf", bytes)
    const stored = await storedValue(gql)
    expect(stored).toMatch(/^v1:/)
    const secret = Buffer.from(decryptSecret(KEY, stored!), "base64url")
    expect(secret).toHaveLength(32)
    expect(stored).not.toContain(secret.toString("base64url"))

    const [document] = ok(await fileUrlsOf(gql, key, projectId)).project.documents
    expect(await download(document.file_url)).toEqual({ status: 200, bytes: new Uint8Array(bytes) })
    // And the REST API's own links too.
    const viaRest = (await a.get(`/projects/${projectId}/documents/${document.id}/`)).body
    expect((await download(viaRest.file_url)).status).toBe(200)
  })

  it("is refused by a process with another encryption key, which leaves it as it is", async () => {
    const projectId = await createProject(a)
    await upload(a, projectId, "two.pdf", onePagePdf("other key"))
    const before = await storedValue(gql)
    const stranger = await startGraphqlServer({
      port: 0,
      host: "127.0.0.1",
      dbUrl: gql.api.dbUrl,
      blobDir: gql.api.blobDir,
      publicUrl: gql.api.origin,
      webhooks: { encryptionKey: randomBytes(32), allowLoopback: false },
    })
    try {
      const r = await fileUrlsOf(stranger, key, projectId)
      expect(r.errors).toHaveLength(1)
      expect(JSON.stringify(r)).not.toContain("file_url=")
    } finally {
      await stranger.close()
    }
    expect(await storedValue(gql)).toBe(before)
    const [document] = ok(await fileUrlsOf(gql, key, projectId)).project.documents
    expect((await download(document.file_url)).status).toBe(200)
  })
})

describe("a file-URL signing key stored in clear", () => {
  const KEY = randomBytes(32)
  const clear = randomBytes(32).toString("base64url")
  let gql: Gateway

  beforeAll(async () => {
    gql = await startGateway({ webhookKey: KEY })
    await withDb(gql.api, (db) =>
      db.insertInto("server_secrets").values({ name: SECRET, value: clear }).execute(),
    )
  })

  afterAll(async () => {
    await gql?.close()
  })

  it("is encrypted on first use, and links signed with it before keep working", async () => {
    const key = await gql.api.newKey("acme")
    const a = gql.api.client(key)
    const projectId = await createProject(a)
    const id = await upload(a, projectId, "old.pdf", onePagePdf("an old link"))
    const stored = await storedValue(gql)
    expect(stored).not.toBe(clear)
    expect(stored).toMatch(/^v1:/)
    expect(decryptSecret(KEY, stored!)).toBe(clear)

    // A link as the previous version signed it.
    const expires = Math.floor(Date.now() / 1000) + 600
    const signature = createHmac("sha256", Buffer.from(clear, "base64url"))
      .update(`${id}\n1\n${expires}`)
      .digest("base64url")
    const old = `${gql.api.base}/files/${id}?expires=${expires}&signature=${signature}`
    expect((await download(old)).status).toBe(200)
    const [document] = ok(await fileUrlsOf(gql, key, projectId)).project.documents
    expect((await download(document.file_url)).status).toBe(200)
  })
})
