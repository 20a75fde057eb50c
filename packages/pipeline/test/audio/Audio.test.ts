import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { audioBackend, timestamp } from "../../src/parsing/Audio.ts"
import type { ParseInput } from "../../src/parsing/Backend.ts"
import { pageChars } from "../../src/parsing/TextPages.ts"
import { parseWith } from "../support.ts"
import { expectGolden, expectTextPages, failureReason, input } from "../text/golden.ts"

const here = new URL("./", import.meta.url)

/** One second of 8 kHz 16-bit mono silence as a WAV file. */
const wav = (): Uint8Array => {
  const samples = 8000
  const bytes = Buffer.alloc(44 + samples * 2)
  bytes.write("RIFF", 0, "ascii")
  bytes.writeUInt32LE(36 + samples * 2, 4)
  bytes.write("WAVEfmt ", 8, "ascii")
  bytes.writeUInt32LE(16, 16)
  bytes.writeUInt16LE(1, 20)
  bytes.writeUInt16LE(1, 22)
  bytes.writeUInt32LE(8000, 24)
  bytes.writeUInt32LE(16000, 28)
  bytes.writeUInt16LE(2, 32)
  bytes.writeUInt16LE(16, 34)
  bytes.write("data", 36, "ascii")
  bytes.writeUInt32LE(samples * 2, 40)
  return new Uint8Array(bytes)
}

interface Received {
  readonly method: string
  readonly path: string
  readonly authorization: string | undefined
  readonly form: FormData
}

interface Answer {
  readonly status: number
  readonly body: unknown
  readonly headers?: Record<string, string>
}

/**
 * A transcription server on loopback speaking the OpenAI protocol: multipart in, JSON out. Each test
 * queues the answers it wants; with none queued it answers a fixed verbose_json transcript.
 */
let server: Server
let url: string
const received: Array<Received> = []
const answers: Array<Answer> = []

const segment = (start: number, text: string) => ({ id: 0, start, end: start + 4, text: ` ${text}` })
const meeting = {
  task: "transcribe",
  language: "english",
  duration: 75.3,
  text: "Welcome to the quarterly review. Revenue was 1.2 million euros. ...",
  segments: [
    segment(0, "Welcome to the quarterly review."),
    segment(4.2, "Revenue was 1.2 million euros,\n up 12 percent."),
    segment(65.9, "The contract term is 24 months."),
    segment(71, "   "),
  ],
}

const readForm = async (request: IncomingMessage): Promise<FormData> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  const headers = { "content-type": request.headers["content-type"] ?? "" }
  return new Request("http://loopback/", { method: "POST", headers, body: Buffer.concat(chunks) }).formData()
}

beforeAll(async () => {
  server = createServer(async (request, response) => {
    const form = await readForm(request).catch(() => new FormData())
    received.push({
      method: request.method ?? "",
      path: request.url ?? "",
      authorization: request.headers.authorization,
      form,
    })
    const answer = answers.shift() ?? { status: 200, body: meeting }
    const body = typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body)
    response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers })
    response.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/audio/transcriptions`
})

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

beforeEach(() => {
  received.length = 0
  answers.length = 0
})

const audio = (fileName: string, bytes: Uint8Array, transcription?: ParseInput["tools"]["transcription"]) =>
  input(fileName, bytes, {
    contentType: "application/octet-stream",
    tools: { libreOffice: undefined, tempDir: "/nonexistent", ...(transcription ? { transcription } : {}) },
  })

describe("audio backend", () => {
  it("refuses to parse without a transcription provider", async () => {
    expect(await failureReason(audioBackend, audio("meeting.mp3", wav()))).toBe(
      "no transcription provider is configured (set TRANSCRIPTION_URL to an OpenAI-compatible /v1/audio/transcriptions endpoint)",
    )
  })

  it("posts the file to the endpoint and makes pages of timed segments, like its golden output", async () => {
    const bytes = wav()
    const output = await parseWith(
      audioBackend,
      audio("calls/meeting.wav", bytes, { url, model: "whisper-1", apiKey: "sk-test" }),
    )
    expectTextPages(output)
    await expectGolden(here, "meeting.wav", output)
    expect(output.pages.map((p) => p.text)).toEqual([
      "[00:00:00] Welcome to the quarterly review.\n" +
        "[00:00:04] Revenue was 1.2 million euros, up 12 percent.\n" +
        "[00:01:05] The contract term is 24 months.",
    ])
    expect(output.metadata).toMatchObject({
      model: "whisper-1",
      language: "english",
      duration_seconds: 75.3,
      segments: 3,
    })

    expect(received).toHaveLength(1)
    const { method, path, authorization, form } = received[0]!
    expect([method, path, authorization]).toEqual(["POST", "/v1/audio/transcriptions", "Bearer sk-test"])
    expect(form.get("model")).toBe("whisper-1")
    expect(form.get("response_format")).toBe("verbose_json")
    const file = form.get("file") as File
    expect([file.name, file.type]).toEqual(["meeting.wav", "audio/wav"])
    expect(Buffer.from(await file.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true)
  })

  it("cuts a long transcript into pages between segments, and sends no key when there is none", async () => {
    const segments = Array.from({ length: 300 }, (_, i) =>
      segment(i * 7.5, `Sentence number ${i + 1} of the recording.`),
    )
    answers.push({ status: 200, body: { text: "…", segments, duration: 2250 } })
    const output = await parseWith(audioBackend, audio("long.m4a", wav(), { url, model: "large-v3" }))
    expect(received[0]!.authorization).toBeUndefined()
    expect((received[0]!.form.get("file") as File).type).toBe("audio/mp4")
    expect(output.pages.length).toBeGreaterThan(3)
    expect(output.metadata.page_source).toBe(
      `transcript in chunks of ${pageChars} characters, one line per segment with its start time`,
    )
    const lines = output.pages.flatMap((p) => p.text.split("\n"))
    expect(lines).toHaveLength(300)
    for (const line of lines)
      expect(line).toMatch(/^\[\d\d:\d\d:\d\d\] Sentence number \d+ of the recording\.$/)
    expect(lines.at(-1)).toBe("[00:37:22] Sentence number 300 of the recording.")
  })

  it("takes the plain text when the server gives no segments", async () => {
    answers.push({ status: 200, body: { text: " Just the words. " } })
    const output = await parseWith(audioBackend, audio("note.ogg", wav(), { url, model: "m" }))
    expect(output.pages.map((p) => p.text)).toEqual(["Just the words."])
    expect(output.metadata).toMatchObject({ segments: 0, page_source: "transcript" })
  })

  it("tries again when the server is busy", async () => {
    answers.push({
      status: 503,
      body: { error: { message: "loading model" } },
      headers: { "retry-after": "0" },
    })
    answers.push({ status: 429, body: "slow down", headers: { "retry-after": "0" } })
    const output = await parseWith(audioBackend, audio("meeting.flac", wav(), { url, model: "m" }))
    expect(received).toHaveLength(3)
    expect(output.pages[0]!.text).toMatch(/^\[00:00:00\] Welcome/)
  })

  it("fails with the server's reason when it refuses the file", async () => {
    answers.push({
      status: 400,
      body: { error: { message: "Invalid file format.", type: "invalid_request_error" } },
    })
    expect(await failureReason(audioBackend, audio("clip.webm", wav(), { url, model: "m" }))).toBe(
      "transcription failed: the transcription service answered 400: Invalid file format.",
    )
    answers.push({ status: 200, body: "<html>not json</html>" })
    expect(await failureReason(audioBackend, audio("clip.mp4", wav(), { url, model: "m" }))).toBe(
      "transcription failed: the transcription service did not answer with JSON",
    )
    answers.push({ status: 200, body: { result: "?" } })
    expect(await failureReason(audioBackend, audio("clip.mp3", wav(), { url, model: "m" }))).toBe(
      "transcription failed: the answer has neither `text` nor `segments`",
    )
  })

  it("fails clearly when the server cannot be reached", async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const reason = await failureReason(
      audioBackend,
      audio("a.mp3", wav(), { url: `http://127.0.0.1:${port}/v1/audio/transcriptions`, model: "m" }),
    )
    expect(reason).toBe("transcription failed: the transcription service could not be reached (ECONNREFUSED)")
  })

  it("writes start times as [hh:mm:ss]", () => {
    expect([0, 65.9, 3599.99, 3600, 36000 + 61].map(timestamp)).toEqual([
      "[00:00:00]",
      "[00:01:05]",
      "[00:59:59]",
      "[01:00:00]",
      "[10:01:01]",
    ])
  })
})
