/**
 * The shapes OCR confuses: letters and digits it reads one for another. The OCR's own reading of a page
 * (`Ocr.ts`, a page's words made consistent) and the local extractor's reading back of its words
 * (`extraction/local/OcrWords.ts`) both tell a misreading by them.
 */

/**
 * Letters (and digits) of like shapes, in capitals or in lower case (`u` and `n`, `a` and `o`, `f` and `t`),
 * which OCR reads one for another.
 */
const LOOK_ALIKE: ReadonlyArray<string> = [
  ...["IL1TJ", "O0DQCU", "UL", "UN", "MNHW", "S5", "B8EPR", "G6C", "A4", "Z2", "EF", "PF", "KX", "VY"],
  ...["AO", "AD", "CE", "FT", "GQ", "NR"],
]

const lookAlike = (a: string, b: string): boolean => LOOK_ALIKE.some((g) => g.includes(a) && g.includes(b))

/** Whether two words of one length differ in exactly one letter (one OCR may misread for the other). */
export const oneLetterOff = (a: string, b: string, likeShapes: boolean): boolean => {
  if (a.length !== b.length) return false
  let off = -1
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue
    if (off >= 0) return false
    off = i
  }
  return off >= 0 && (!likeShapes || lookAlike(a[off]!, b[off]!))
}
