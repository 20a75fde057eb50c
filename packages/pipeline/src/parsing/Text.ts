/**
 * Plain text files (.txt, .md, .json, .xml, .log): decoded, line ends normalised, kept verbatim. Text
 * has no pages, so long text is cut into pages of about 3,000 characters at paragraph or line breaks.
 */
import { Effect } from "effect"
import { type Backend, ParseFailure } from "./Backend.ts"
import {
  chunkText,
  countCharacters,
  countLines,
  decodeText,
  looksBinary,
  normaliseLineEnds,
  pageSource,
  textPages,
} from "./TextPages.ts"
import { noStructure, placeStructure } from "./TextStructure.ts"

export const textBackend: Backend = {
  name: "text",
  parse: ({ bytes, limits, fileName }) =>
    Effect.gen(function* () {
      const decoded = decodeText(bytes)
      if (looksBinary(decoded.text))
        return yield* new ParseFailure({ reason: "the file is not text (it looks binary)" })
      const text = normaliseLineEnds(decoded.text)
      const chunks = yield* textPages(chunkText(text), limits)
      // Markdown states its headings (`# Title`); other text's blocks are read from it when it is shown.
      const pages = /\.(md|markdown)$/iu.test(fileName)
        ? placeStructure(chunks, noStructure, { markdown: true })
        : chunks
      return {
        parser: "text",
        pages,
        metadata: {
          encoding: decoded.encoding,
          ...(decoded.bom ? { bom: true } : {}),
          characters: countCharacters(text),
          lines: countLines(text),
          page_source: pageSource(pages.length),
        },
      }
    }),
}
