import { type BackendName, formatOfFileName } from "@dxs/domain/DocumentType"
import { audioBackend } from "./Audio.ts"
import type { Backend } from "./Backend.ts"
import { emailBackend } from "./Email.ts"
import { excelBackend } from "./Excel.ts"
import { backendLoaders } from "./Formats.ts"
import { htmlBackend } from "./Html.ts"
import { imageBackend } from "./Image.ts"
import { outlookMessageBackend } from "./Outlook.ts"
import { pdfBackend } from "./Pdf.ts"
import { powerPointBackend } from "./PowerPoint.ts"
import { textBackend } from "./Text.ts"
import { wordBackend } from "./Word.ts"

/**
 * Every format backend loaded at once, by the name the format table (`@dxs/domain/DocumentType`) gives
 * it; parse threads load only the one they need (Formats.ts).
 */
const backendsByName: { readonly [Name in BackendName]: Backend } = {
  pdf: pdfBackend,
  word: wordBackend,
  excel: excelBackend,
  powerpoint: powerPointBackend,
  image: imageBackend,
  text: textBackend,
  html: htmlBackend,
  email: emailBackend,
  "outlook-msg": outlookMessageBackend,
  audio: audioBackend,
}

export const backends: ReadonlyArray<Backend> = Object.values(backendsByName)

export const backendFor = (fileName: string): Backend | undefined => {
  const format = formatOfFileName(fileName)
  return format ? backendsByName[format.backend] : undefined
}

/** Loads only the backend for a file name, or undefined when no backend reads its extension. */
export const loadBackendFor = (fileName: string): Promise<Backend | undefined> => {
  const format = formatOfFileName(fileName)
  return format ? backendLoaders[format.backend]() : Promise.resolve(undefined)
}
