import { readFileSync } from "node:fs"
import { defaultLimits } from "./src/parsing/Backend.ts"
import { pageGraphics } from "./src/parsing/PdfiumGraphics.ts"
import { geometryOf, withDocument, withPage } from "./src/parsing/PdfiumModule.ts"

const [file, pageNo] = [process.argv[2]!, Number(process.argv[3] ?? 1)]
const bytes = new Uint8Array(readFileSync(file))
await withDocument(
  {
    bytes,
    fileName: "x.pdf",
    contentType: "application/pdf",
    limits: defaultLimits,
    tools: { libreOffice: undefined, tempDir: "/tmp" },
  },
  async (doc) => {
    await withPage(doc, pageNo, async (page) => {
      const g = pageGraphics(doc, page, geometryOf(doc, page))
      console.log("paths", g.paths, "rulings", g.rulings.length, "images", JSON.stringify(g.images))
      for (const r of g.rulings.slice(0, Number(process.env.N ?? 80)))
        console.log(
          r.x0.toFixed(1),
          r.y0.toFixed(1),
          r.x1.toFixed(1),
          r.y1.toFixed(1),
          r.y0 === r.y1 ? "H" : "V",
        )
    })
  },
)
