/**
 * A file converted to its content offline, as `dxs parse` does (no server, no database): parsed in a
 * thread of the pool under the parse limits, as an upload is, and its attachments (an e-mail's) parsed the
 * same way, nested as deep as the limits allow. A file that cannot be read is a ParseFailure with its reason.
 */
import { type ContentDocument, contentPageOf } from "@dxs/domain/Content"
import { documentTypeFromFileName, extensionOfMimeType } from "@dxs/domain/DocumentType"
import { defaultLimits, ParseFailure } from "./Backend.ts"
import { type FileToParse, type RunOptions, runParse } from "./Runner.ts"

/** An attachment read as well as it can be; one that fails says so in its place. */
const attachmentContent = async (
  file: FileToParse,
  options: RunOptions,
  depth: number,
): Promise<ContentDocument> => {
  try {
    return await convertFile(file, options, depth)
  } catch (e) {
    if (!(e instanceof ParseFailure)) throw e
    const page = { page_number: 1, width: null, height: null, unit: null, text: `(not read: ${e.reason})` }
    return {
      file_name: file.fileName,
      type: documentTypeFromFileName(file.fileName) ?? "Unknown",
      pages: [{ ...page, blocks: [], tables: [] }],
      attachments: [],
    }
  }
}

/**
 * The file's content: its pages with their blocks and tables, and its attachments' content after it (those
 * of a type dxs reads, at most `maxAttachments`, `maxAttachmentDepth` levels down).
 */
export const convertFile = async (
  file: FileToParse,
  options: RunOptions = {},
  depth = 0,
): Promise<ContentDocument> => {
  const limits = options.limits ?? defaultLimits
  const output = await runParse(file, options)
  const maxDepth = limits.maxAttachmentDepth ?? defaultLimits.maxAttachmentDepth
  const readable = (output.attachments ?? [])
    .map((a) => {
      const known = documentTypeFromFileName(a.fileName) !== undefined
      const ext = extensionOfMimeType(a.contentType)
      return { ...a, fileName: known || ext === undefined ? a.fileName : `${a.fileName}.${ext}` }
    })
    .filter((a) => documentTypeFromFileName(a.fileName) !== undefined && a.bytes.byteLength > 0)
    .slice(0, limits.maxAttachments ?? defaultLimits.maxAttachments)
  const attachments: Array<ContentDocument> = []
  if (depth < maxDepth)
    for (const a of readable)
      attachments.push(
        await attachmentContent(
          { bytes: a.bytes, fileName: a.fileName, contentType: a.contentType },
          options,
          depth + 1,
        ),
      )
  return {
    file_name: file.fileName,
    type: documentTypeFromFileName(file.fileName) ?? "Unknown",
    pages: output.pages.map((p, i) =>
      contentPageOf({ ...p, number: Number.isSafeInteger(p.number) && p.number >= 1 ? p.number : i + 1 }),
    ),
    attachments,
  }
}
