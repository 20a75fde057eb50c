/** Labelled values: `Label: value` rows and a label line above its value, whatever the kind of value. */
import { collapseWhitespace } from "@dxs/domain/Values"
import type { Candidate } from "./Candidates.ts"

const LABELLED =
  /^[ \t]*([A-Za-z#][A-Za-z0-9 #&/()'’.-]{0,48}?)[ \t]*(?::|\.{3,}|…+|\t+|[ ]{2,})[ \t]*([^\s].{0,120}?)[ \t]*$/gm

/** `Label: value`, `Label ..... value`, `Label    value` rows, and a short label line above a value line. */
export const findLabelled = (text: string): Array<Candidate> => {
  const out: Array<Candidate> = []
  for (const m of text.matchAll(LABELLED)) {
    const label = m[1]!.trim()
    const value = m[2]!.trim()
    if (label.length < 2 || value.length === 0) continue
    const valueStart = m.index + m[0].lastIndexOf(m[2]!.trimEnd())
    out.push({
      kind: "text",
      value: collapseWhitespace(value),
      start: m.index + m[0].indexOf(label),
      end: valueStart + value.length,
      valueStart,
      valueEnd: valueStart + value.length,
      pattern: `labelled value "${label}"`,
      strength: 0.6,
      label,
    })
  }
  // A label alone on its line (ending with ":"), the value on the next line.
  for (const m of text.matchAll(
    /^[ \t]*([A-Za-z#][A-Za-z0-9 #&/()'’.-]{1,48}):[ \t]*\n[ \t]*([^\n]{1,120})$/gm,
  )) {
    const label = m[1]!.trim()
    const value = m[2]!.trim()
    const valueStart = m.index + m[0].lastIndexOf(value)
    out.push({
      kind: "text",
      value: collapseWhitespace(value),
      start: m.index + m[0].indexOf(label),
      end: valueStart + value.length,
      valueStart,
      valueEnd: valueStart + value.length,
      pattern: `labelled value "${label}" (next line)`,
      strength: 0.6,
      label,
    })
  }
  return out
}
