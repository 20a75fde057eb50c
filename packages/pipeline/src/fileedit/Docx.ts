/**
 * Filling a Word template with docxtemplater: `{{…}}` delimiters and a parser that resolves a tag's whole
 * text (`Agent | Dimension=value`) against the results; a placeholder split across runs is one tag to it. An
 * unresolved placeholder is written back as it was. Where each placeholder is (`paragraph 12`) comes from a
 * scan of the parts docxtemplater fills.
 */
import {
  FILE_EDIT_MAX_PLACEHOLDERS,
  type PlaceholderProblem,
  placeholdersIn,
  type ResultIndex,
  resolvePlaceholder,
  valueText,
} from "@dxs/domain/FileEdit"
import Docxtemplater from "docxtemplater"
import { Effect } from "effect"
import PizZip from "pizzip"
import { type FillOutcome, FillRefused, type Progress } from "./Fill.ts"

/** The parts docxtemplater fills, and how a location in each is named. */
const partLabel = (name: string): string | undefined => {
  if (name === "word/document.xml") return ""
  const m = /^word\/(header|footer)(\d*)\.xml$/.exec(name)
  if (m) return `${m[1]} ${m[2] || "1"}, `
  if (name === "word/footnotes.xml") return "footnotes, "
  if (name === "word/endnotes.xml") return "endnotes, "
  if (name === "word/comments.xml") return "comments, "
  return undefined
}

const ENTITIES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" }
const decodeXml = (s: string) =>
  s.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (all, e: string) =>
    e[0] === "#"
      ? String.fromCodePoint(
          e[1] === "x" || e[1] === "X" ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1)),
        )
      : (ENTITIES[e] ?? all),
  )

/** Each paragraph's text (its `w:t` runs joined), in order. */
const paragraphTexts = (xml: string): Array<string> =>
  Array.from(xml.matchAll(/<w:p[\s>][\s\S]*?<\/w:p>/g), (p) =>
    decodeXml(Array.from(p[0].matchAll(/<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>/g), (t) => t[1] ?? "").join("")),
  )

const tagKey = (tag: string) => tag.trim()

/** Fills a Word template; a file that is no ZIP archive is a defect (the task's attempt fails with it). */
export const fillDocx = <E>(
  bytes: Uint8Array,
  index: ResultIndex,
  progress: Progress<E>,
): Effect.Effect<FillOutcome, FillRefused | E> =>
  Effect.gen(function* () {
    const zip = new PizZip(bytes)
    const found: Array<{ raw: string; inner: string; location: string }> = []
    for (const name of Object.keys(zip.files).sort()) {
      const label = partLabel(name)
      if (label === undefined) continue
      for (const [i, text] of paragraphTexts(zip.file(name)!.asText()).entries())
        for (const p of placeholdersIn(text)) {
          found.push({ raw: p.raw, inner: p.inner, location: `${label}paragraph ${i + 1}` })
          if (found.length > FILE_EDIT_MAX_PLACEHOLDERS)
            return yield* new FillRefused({
              message: `The template has more than ${FILE_EDIT_MAX_PLACEHOLDERS} placeholders: split it into smaller templates.`,
            })
        }
    }
    const total = found.length
    yield* progress(0, total)

    const problems: Array<PlaceholderProblem> = []
    const written = new Map<string, string>()
    for (const p of found) {
      const r = resolvePlaceholder(index, p.inner)
      if (!r.ok) problems.push({ placeholder: p.raw, location: p.location, message: r.message })
      if (!written.has(tagKey(p.inner))) written.set(tagKey(p.inner), r.ok ? valueText(r.value) : p.raw)
    }

    const doc = yield* Effect.try({
      try: () => {
        const doc = new Docxtemplater(zip, {
          delimiters: { start: "{{", end: "}}" },
          paragraphLoop: true,
          linebreaks: true,
          // Its errors come back in the job's `error`, not on the worker's console.
          errorLogging: false,
          parser: (tag) => ({
            get: () => {
              const key = tagKey(tag)
              const known = written.get(key)
              if (known !== undefined) return known
              const r = resolvePlaceholder(index, tag)
              return r.ok ? valueText(r.value) : `{{${tag}}}`
            },
          }),
          nullGetter: (part) => `{{${part.value}}}`,
        })
        doc.render({})
        return doc
      },
      catch: (e) =>
        new FillRefused({
          message: `The template's placeholders could not be read: ${templateErrorText(e)}`,
        }),
    })
    yield* progress(total, total)
    const out = doc.getZip().generate({ type: "uint8array", compression: "DEFLATE" })
    return { bytes: out, problems }
  })

/** docxtemplater's errors (several, with their tags) as one sentence. */
const templateErrorText = (e: unknown): string => {
  const errors = (
    e as {
      properties?: { errors?: ReadonlyArray<{ message?: string; properties?: { explanation?: string } }> }
    }
  ).properties?.errors
  if (errors && errors.length > 0)
    return errors
      .slice(0, 5)
      .map((x) => x.properties?.explanation ?? x.message ?? "error")
      .join("; ")
  return e instanceof Error ? e.message : String(e)
}
