/**
 * A template's format, checked from its content: an OOXML package (a zip) with the main part of its
 * format, within a bound on its decompressed size.
 */
import type { TemplateFormat } from "@dxs/domain/FileEdit"
import PizZip from "pizzip"

/** The decompressed size a template may reach (a small zip can hold a great deal). */
export const TEMPLATE_MAX_DECOMPRESSED_BYTES = 200 * 1024 * 1024

const MAIN_PART: Readonly<Record<TemplateFormat, string>> = {
  xlsx: "xl/workbook.xml",
  docx: "word/document.xml",
}

export const TEMPLATE_CONTENT_TYPES: Readonly<Record<TemplateFormat, string>> = {
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
}

/** The format a file name's extension claims, if it is a template format. */
export const templateFormatOf = (fileName: string): TemplateFormat | undefined => {
  const ext = /\.([^./\\]+)$/.exec(fileName)?.[1]?.toLowerCase()
  return ext === "xlsx" || ext === "docx" ? ext : undefined
}

export type TemplateCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: "not-a-package" | "too-large"; readonly detail: string }

/** Whether `bytes` are a `format` package: a zip holding the format's main part, not too large unpacked. */
export const checkTemplateContent = (bytes: Uint8Array, format: TemplateFormat): TemplateCheck => {
  let zip: PizZip
  try {
    zip = new PizZip(bytes)
  } catch {
    return {
      ok: false,
      reason: "not-a-package",
      detail: `the file is not a .${format} file (not a zip package)`,
    }
  }
  if (zip.file(MAIN_PART[format]) === null)
    return {
      ok: false,
      reason: "not-a-package",
      detail: `the file is not a .${format} file (it has no ${MAIN_PART[format]})`,
    }
  let total = 0
  for (const file of Object.values(zip.files)) {
    total += (file as unknown as { _data?: { uncompressedSize?: number } })._data?.uncompressedSize ?? 0
    if (total > TEMPLATE_MAX_DECOMPRESSED_BYTES)
      return {
        ok: false,
        reason: "too-large",
        detail: `the file unpacks to more than ${TEMPLATE_MAX_DECOMPRESSED_BYTES} bytes`,
      }
  }
  return { ok: true }
}
