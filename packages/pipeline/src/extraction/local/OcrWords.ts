/**
 * Words of a fixed vocabulary as OCR misreads them on scans and receipts — a letter for another (`JUN` and
 * `Jin` for `JLN`, `TANAN` for `TAMAN`, `SON BHD` for `SDN BHD`), a digit for a letter (`5/B` for `S/B`) —
 * read back as the vocabulary's word, in the case they were printed in. Only a word that is no word of the
 * vocabulary and stands one letter from exactly one of them is read back: a name or a place the vocabulary
 * does not know stays as printed.
 */
import { oneLetterOff } from "../../parsing/OcrShapes.ts"

/** Digits OCR reads for letters of the same shape. */
const LETTER_OF_DIGIT: Readonly<Record<string, string>> = { "0": "O", "1": "L", "5": "S", "8": "B" }

/** `word` in the case of `printed`: capitals, lower case or capitalised. */
export const inCaseOf = (word: string, printed: string): string => {
  const letters = printed.replace(/[^A-Za-z]/g, "")
  if (letters === "" || letters === letters.toUpperCase()) return word.toUpperCase()
  if (letters === letters.toLowerCase()) return word.toLowerCase()
  return word.charAt(0).toUpperCase() + word.slice(1).toLowerCase()
}

export interface Vocabulary {
  /** The words, upper case. */
  readonly words: ReadonlySet<string>
  /**
   * Only a letter of like shape stands for another (`JUN` for `JLN`, never `RAYA` for `JAYA`): for words
   * read anywhere in a block, where real words one letter from the vocabulary's occur.
   */
  readonly likeShapes: boolean
}

export const vocabulary = (words: ReadonlyArray<string>, likeShapes = true): Vocabulary => ({
  words: new Set(words.map((w) => w.toUpperCase())),
  likeShapes,
})

/**
 * The vocabulary's word a printed word of three letters or more stands for: itself when it is one, else the
 * only word of the vocabulary one letter off (of like shape, when the vocabulary says so); undefined when
 * there is none or more than one. Digits inside letters are read as the letters they look like.
 */
export const vocabularyWord = (printed: string, v: Vocabulary): string | undefined => {
  const upper = printed.toUpperCase()
  if (v.words.has(upper)) return upper
  const read = /[A-Z]/.test(upper) ? upper.replace(/[0158]/g, (d) => LETTER_OF_DIGIT[d]!) : upper
  if (v.words.has(read)) return read
  if (read.length < 3 || /[^A-Z]/.test(read)) return undefined
  let found: string | undefined
  for (const w of v.words) {
    if (!oneLetterOff(read, w, v.likeShapes)) continue
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
