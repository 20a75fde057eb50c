/**
 * Words of a fixed vocabulary as OCR misreads them on scans and receipts — a letter for another (`JUN` and
 * `Jin` for `JLN`, `TANAN` for `TAMAN`, `SON BHD` for `SDN BHD`), a digit for a letter (`5/B` for `S/B`) —
 * read back as the vocabulary's word, in the case they were printed in. Only a word that is no word of the
 * vocabulary and stands one letter from exactly one of them is read back: a name or a place the vocabulary
 * does not know stays as printed.
 */
import { editDistance } from "@dxs/domain/Grounding"

/** Digits OCR reads for letters of the same shape. */
const LETTER_OF_DIGIT: Readonly<Record<string, string>> = { "0": "O", "1": "L", "5": "S", "8": "B" }

/** `word` in the case of `printed`: capitals, lower case or capitalised. */
export const inCaseOf = (word: string, printed: string): string => {
  const letters = printed.replace(/[^A-Za-z]/g, "")
  if (letters === "" || letters === letters.toUpperCase()) return word.toUpperCase()
  if (letters === letters.toLowerCase()) return word.toLowerCase()
  return word.charAt(0).toUpperCase() + word.slice(1).toLowerCase()
}

/** Letters that differ between two words of one length (more than one: Infinity). */
const substitutions = (a: string, b: string): number => {
  if (a.length !== b.length) return Number.POSITIVE_INFINITY
  let n = 0
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) n++
  return n
}

export interface Vocabulary {
  /** The words, upper case. */
  readonly words: ReadonlySet<string>
  /** Words of at least this many letters may also have lost or gained a letter (`Jalaa`, `CLOT`). */
  readonly editsFrom: number
}

export const vocabulary = (words: ReadonlyArray<string>, editsFrom = 6): Vocabulary => ({
  words: new Set(words.map((w) => w.toUpperCase())),
  editsFrom,
})

/**
 * The vocabulary's word a printed word stands for: itself when it is one, else the only word of the
 * vocabulary one letter away (a substitution; a letter more or less from `editsFrom` letters on); undefined
 * when there is none or more than one. Digits inside letters are read as the letters they look like.
 */
export const vocabularyWord = (printed: string, v: Vocabulary): string | undefined => {
  const upper = printed.toUpperCase()
  if (v.words.has(upper)) return upper
  const read = /[A-Z]/.test(upper) ? upper.replace(/[0158]/g, (d) => LETTER_OF_DIGIT[d]!) : upper
  if (v.words.has(read)) return read
  if (read.length < 3 || /[^A-Z]/.test(read)) return undefined
  let found: string | undefined
  for (const w of v.words) {
    const near =
      substitutions(read, w) === 1 ||
      (read.length >= v.editsFrom && w.length >= v.editsFrom && editDistance(read, w, 1) === 1)
    if (!near) continue
    if (found !== undefined) return undefined
    found = w
  }
  return found
}

/** Every word of a text that stands for a word of the vocabulary, read back (in its printed case). */
export const readWords = (text: string, v: Vocabulary): string =>
  text.replace(/[A-Za-z][A-Za-z0158]*[A-Za-z]|[A-Za-z]{2,}/g, (printed) => {
    const word = vocabularyWord(printed, v)
    return word === undefined ? printed : inCaseOf(word, printed)
  })
