/**
 * Pages of lists: the links of a page envelope (`count`, `next`, `previous`, `results`) and the opaque
 * cursors they carry (beyond the contract). A link keeps the query's filters in the order given, relative
 * to the list's own path. `next` resumes after the page's last row (`cursor=`), so every page costs what the
 * first does however deep it is; `previous` ends before its first row, or is the first page (`offset=0`).
 * `offset` keeps working as the contract says.
 */
import { Effect, Either, Schema } from "effect"
import { BadRequest } from "./Errors.ts"

/** A query parameter of the list: unset (left out of the links) or its value. */
export type PageFilter = readonly [name: string, value: string | number | undefined]

/** Where a page starts: after (or before) the row a key names, `position` rows into the list. */
export interface CursorOf<K> {
  readonly after?: K | undefined
  readonly before?: K | undefined
  /** The offset of the page's first row (after) or of the row the key names (before). */
  readonly position: number
}

/** The longest cursor accepted (keys hold ids and at most a few hundred characters of names). */
export const CURSOR_MAX_LENGTH = 4096

const Envelope = Schema.Struct({
  a: Schema.optional(Schema.Unknown),
  b: Schema.optional(Schema.Unknown),
  p: Schema.Int.pipe(Schema.between(0, 2_147_483_647)),
})

export const encodeCursor = <K>(cursor: CursorOf<K>): string =>
  Buffer.from(
    JSON.stringify({
      ...(cursor.after !== undefined ? { a: cursor.after } : {}),
      ...(cursor.before !== undefined ? { b: cursor.before } : {}),
      p: cursor.position,
    }),
  ).toString("base64url")

const invalidCursor = () =>
  BadRequest.of("cursor is not a cursor of this list: follow the next and previous links", [
    { path: "cursor", message: "must be a cursor from this list's next or previous link" },
  ])

/** A cursor of the list whose keys `key` describes, or 400. */
export const decodeCursor = <K, I>(key: Schema.Schema<K, I>, text: string) =>
  Effect.gen(function* () {
    if (text.length === 0 || text.length > CURSOR_MAX_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text))
      return yield* invalidCursor()
    let json: unknown
    try {
      json = JSON.parse(Buffer.from(text, "base64url").toString("utf8"))
    } catch {
      return yield* invalidCursor()
    }
    const envelope = Schema.decodeUnknownEither(Envelope)(json)
    if (Either.isLeft(envelope)) return yield* invalidCursor()
    const { a, b, p } = envelope.right
    if ((a === undefined) === (b === undefined)) return yield* invalidCursor()
    const decoded = Schema.decodeUnknownEither(key)(a ?? b)
    if (Either.isLeft(decoded)) return yield* invalidCursor()
    return (
      a !== undefined ? { after: decoded.right, position: p } : { before: decoded.right, position: p }
    ) as CursorOf<K>
  })

/** `offset` and `cursor` name a page's start two ways: one of them, or 400. */
export const pageStart = <K, I>(
  key: Schema.Schema<K, I>,
  query: { readonly offset?: number | undefined; readonly cursor?: string | undefined },
): Effect.Effect<CursorOf<K> | undefined, BadRequest> =>
  query.cursor === undefined
    ? Effect.succeed(undefined)
    : query.offset !== undefined
      ? Effect.fail(
          BadRequest.of("offset and cursor cannot be given together", [
            { path: "cursor", message: "cannot be given with offset" },
          ]),
        )
      : decodeCursor(key, query.cursor)

/**
 * The links of a page: `next` when rows follow it (a cursor after its last row), `previous` when rows come
 * before it (a cursor before its first row, or the first page). Without keys (an empty page), links by
 * offset, clamped to the count.
 */
export const pageLinks = <K = never>(
  filters: ReadonlyArray<PageFilter>,
  page: {
    readonly count: number
    readonly limit: number
    /** The offset of the page's first row. */
    readonly offset: number
    /** The rows on the page (default: as many as the limit allows). */
    readonly rows?: number | undefined
    readonly first?: K | undefined
    readonly last?: K | undefined
  },
): { readonly next: string | null; readonly previous: string | null } => {
  const { count, limit, offset } = page
  const rows = page.rows ?? Math.max(0, Math.min(limit, count - offset))
  const link = (at: { readonly offset: number } | { readonly cursor: string }) => {
    const params: Array<readonly [string, string]> = []
    for (const [name, value] of filters) if (value !== undefined) params.push([name, String(value)])
    params.push(["limit", String(limit)])
    params.push("cursor" in at ? ["cursor", at.cursor] : ["offset", String(at.offset)])
    return `?${params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&")}`
  }
  const nextAt = offset + rows
  const next =
    nextAt >= count || rows === 0
      ? null
      : page.last !== undefined
        ? link({ cursor: encodeCursor({ after: page.last, position: nextAt }) })
        : link({ offset: nextAt })
  const previous =
    offset <= 0
      ? null
      : offset - limit <= 0 || page.first === undefined || offset > count
        ? link({ offset: Math.max(0, Math.min(offset, count) - limit) })
        : link({ cursor: encodeCursor({ before: page.first, position: offset }) })
  return { next, previous }
}

/**
 * JSON text in pieces, to be read one after the other: the text a database built with what the code puts
 * in its slots between them, where joining them would copy a page's text (tens of kilobytes) once more.
 */
export type JsonPieces = ReadonlyArray<string>

/**
 * `pieces` written one after the other into one buffer of their exact size, after `head` and before
 * `tail`: the bytes of an answer, made without a joined string (each join or flattening of a page's text
 * copies it on the JavaScript heap; the buffer lives outside it, and the socket writes it as it is).
 */
export const piecesBytes = (head: string, pieces: JsonPieces, tail: string): Buffer => {
  let size = Buffer.byteLength(head) + Buffer.byteLength(tail)
  for (const piece of pieces) size += Buffer.byteLength(piece)
  const bytes = Buffer.allocUnsafe(size)
  let at = bytes.write(head, 0)
  for (const piece of pieces) at += bytes.write(piece, at)
  bytes.write(tail, at)
  return bytes
}

/** A page envelope whose rows are already JSON text (an array), built by the database. */
export interface JsonPage {
  readonly count: number
  readonly next: string | null
  readonly previous: string | null
  /** The rows' JSON array in pieces. */
  readonly resultsJson: JsonPieces
}

/** An envelope's JSON up to its rows' member: `count`, `next`, `previous`, then `rest` (its other members). */
export const envelopeHead = (
  page: { readonly count: number; readonly next: string | null; readonly previous: string | null },
  rest: string,
) =>
  `{"count":${page.count},"next":${JSON.stringify(page.next)},"previous":${JSON.stringify(page.previous)},${rest}`

/**
 * The envelope's JSON (UTF-8): `count`, `next`, `previous`, then the rows as they are, made without joining
 * the rows' pieces (see `piecesBytes`).
 */
export const jsonPageBytes = (page: JsonPage): Buffer =>
  piecesBytes(envelopeHead(page, `"results":`), page.resultsJson, "}")
