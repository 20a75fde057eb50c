import { audioBackend } from "./Audio.ts"
import type { Backend } from "./Backend.ts"
import { emailBackend } from "./Email.ts"
import { excelBackend } from "./Excel.ts"
import { htmlBackend } from "./Html.ts"
import { imageBackend } from "./Image.ts"
import { outlookMessageBackend } from "./Outlook.ts"
import { pdfBackend } from "./Pdf.ts"
import { powerPointBackend } from "./PowerPoint.ts"
import { textBackend } from "./Text.ts"
import { wordBackend } from "./Word.ts"

/**
 * Every format backend, keyed by extension. Adding a format = one backend file + one line here + one
 * fixture folder.
 */
export const backends: ReadonlyArray<Backend> = [
  textBackend,
  htmlBackend,
  emailBackend,
  outlookMessageBackend,
  audioBackend,
  wordBackend,
  powerPointBackend,
  excelBackend,
  imageBackend,
  pdfBackend,
]

export const backendFor = (fileName: string): Backend | undefined => {
  const dot = fileName.lastIndexOf(".")
  const ext = dot > 0 ? fileName.slice(dot).toLowerCase() : ""
  return backends.find((b) => b.extensions.includes(ext))
}
