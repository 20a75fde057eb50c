/**
 * Audio and video recordings, transcribed by an OpenAI-compatible `/v1/audio/transcriptions` endpoint
 * (OpenAI, a faster-whisper or whisper.cpp server, vLLM…). Pages are chunks of the transcript, one line
 * per segment with its start time, e.g. `[00:01:05] …`, so that a citation points to a moment.
 */
import { mimeTypeOfFileName } from "@dxs/domain/DocumentType"
import { Effect, Either } from "effect"
import { type Backend, ParseFailure, type ParseInput } from "./Backend.ts"
import { chunkText, pageChars, textPages } from "./TextPages.ts"

const notConfigured =
  "no transcription provider is configured (set TRANSCRIPTION_URL to an OpenAI-compatible /v1/audio/transcriptions endpoint)"

/** Attempts for an answer that may pass (429, 5xx, no connection); waits between them in milliseconds. */
const retryWaits = [1000, 4000]
const maxRetryAfterMs = 30_000

interface Segment {
  readonly start: number
  readonly text: string
}

interface Transcript {
  readonly text: string
  readonly segments: ReadonlyArray<Segment>
  readonly language?: string
  readonly duration?: number
}

/** `[hh:mm:ss]` of a time in seconds. */
export const timestamp = (seconds: number): string => {
  const s = Math.max(0, Math.floor(seconds))
  const pad = (n: number) => String(n).padStart(2, "0")
  return `[${pad(Math.floor(s / 3600))}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}]`
}

const baseName = (fileName: string): string => fileName.split(/[\\/]/).pop() || "audio"

/** What the service said about a refusal, briefly: OpenAI's `{error: {message}}`, or the start of the body. */
const refusalDetail = (body: string): string => {
  let detail = body
  try {
    const json: unknown = JSON.parse(body)
    const error = (json as { error?: unknown })?.error
    const message = typeof error === "string" ? error : (error as { message?: unknown })?.message
    if (typeof message === "string") detail = message
    else if (typeof (json as { detail?: unknown })?.detail === "string")
      detail = (json as { detail: string }).detail
  } catch {
    // not JSON: the body itself
  }
  detail = detail.replace(/\s+/g, " ").trim()
  return detail.length > 300 ? `${detail.slice(0, 300)}…` : detail
}

const retryAfterMs = (response: Response, fallback: number): number => {
  const seconds = Number(response.headers.get("retry-after"))
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds * 1000, maxRetryAfterMs) : fallback
}

const request = async (input: ParseInput, url: string, model: string, apiKey?: string): Promise<Response> => {
  const name = baseName(input.fileName)
  const type = mimeTypeOfFileName(name) ?? (input.contentType || "application/octet-stream")
  const form = new FormData()
  form.set("file", new Blob([new Uint8Array(input.bytes)], { type }), name)
  form.set("model", model)
  form.set("response_format", "verbose_json")
  return fetch(url, {
    method: "POST",
    body: form,
    ...(apiKey ? { headers: { authorization: `Bearer ${apiKey}` } } : {}),
  })
}

/** The service's answer, retried while it says "later"; a ParseFailure when it cannot be had. */
const transcribe = (
  input: ParseInput,
  url: string,
  model: string,
  apiKey?: string,
): Effect.Effect<unknown, ParseFailure> =>
  Effect.gen(function* () {
    for (let attempt = 0; ; attempt++) {
      const wait = retryWaits[attempt]
      const sent = yield* Effect.either(
        Effect.tryPromise({ try: () => request(input, url, model, apiKey), catch: (error) => error }),
      )
      if (Either.isLeft(sent)) {
        if (wait !== undefined) {
          yield* Effect.sleep(wait)
          continue
        }
        const error = sent.left
        const cause = (error as { cause?: { code?: unknown } }).cause?.code ?? (error as Error).message
        return yield* new ParseFailure({
          reason: `transcription failed: the transcription service could not be reached (${cause})`,
        })
      }
      const response = sent.right
      const body = yield* Effect.promise(() => response.text())
      if (response.ok)
        return yield* Effect.try({
          try: (): unknown => JSON.parse(body),
          catch: () =>
            new ParseFailure({
              reason: "transcription failed: the transcription service did not answer with JSON",
            }),
        })
      const passing = response.status === 429 || response.status >= 500
      if (passing && wait !== undefined) {
        yield* Effect.sleep(retryAfterMs(response, wait))
        continue
      }
      const detail = refusalDetail(body)
      return yield* new ParseFailure({
        reason: `transcription failed: the transcription service answered ${response.status}${detail ? `: ${detail}` : ""}`,
      })
    }
  })

const transcriptOf = (json: unknown): Either.Either<Transcript, ParseFailure> => {
  const answer = (json ?? {}) as Record<string, unknown>
  if (typeof answer.text !== "string" && !Array.isArray(answer.segments))
    return Either.left(
      new ParseFailure({ reason: "transcription failed: the answer has neither `text` nor `segments`" }),
    )
  const segments = (Array.isArray(answer.segments) ? answer.segments : [])
    .map((s: unknown) => s as Record<string, unknown>)
    .filter((s) => typeof s?.text === "string")
    .map((s) => ({ start: typeof s.start === "number" ? s.start : 0, text: (s.text as string).trim() }))
    .filter((s) => s.text !== "")
  return Either.right({
    text: typeof answer.text === "string" ? answer.text.trim() : segments.map((s) => s.text).join(" "),
    segments,
    ...(typeof answer.language === "string" ? { language: answer.language } : {}),
    ...(typeof answer.duration === "number" ? { duration: answer.duration } : {}),
  })
}

export const audioBackend: Backend = {
  name: "audio",
  parse: (input) =>
    Effect.gen(function* () {
      const service = input.tools.transcription
      if (service === undefined) return yield* new ParseFailure({ reason: notConfigured })
      const transcript = yield* transcriptOf(
        yield* transcribe(input, service.url, service.model, service.apiKey),
      )
      const timed = transcript.segments.length > 0
      const text = timed
        ? transcript.segments.map((s) => `${timestamp(s.start)} ${s.text.replace(/\s+/g, " ")}`).join("\n")
        : transcript.text
      const pages = yield* textPages(chunkText(text), input.limits)
      return {
        parser: `transcription (${service.model})`,
        pages,
        metadata: {
          model: service.model,
          ...(transcript.language ? { language: transcript.language } : {}),
          ...(transcript.duration !== undefined ? { duration_seconds: transcript.duration } : {}),
          segments: transcript.segments.length,
          page_source: `transcript${pages.length > 1 ? ` in chunks of ${pageChars} characters` : ""}${
            timed ? ", one line per segment with its start time" : ""
          }`,
        },
      }
    }),
}
