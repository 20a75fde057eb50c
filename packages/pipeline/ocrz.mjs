import sharp from "sharp"
import Tesseract from "tesseract.js"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
const require = createRequire(import.meta.url)
const opts = {
  langPath: join(dirname(require.resolve("@tesseract.js-data/eng/package.json")), "4.0.0_best_int"),
  workerPath: require.resolve("tesseract.js/src/worker-script/node/index.js"),
  gzip: true, cacheMethod: "none", errorHandler: () => {},
}
const w = await Tesseract.createWorker("eng", Tesseract.OEM.LSTM_ONLY, opts)
for (const [id, s] of process.argv.slice(2).map(a => a.split(":"))) {
  const file = `/work/shared/corpus/labelled/receipts-sroie/img/${id}.jpg`
  const m = await sharp(file).metadata()
  const png = await sharp(file).resize({ width: Math.round(m.width * Number(s)) }).png().toBuffer()
  const r = await w.recognize(png, {}, { blocks: true })
  for (const l of r.data.blocks.flatMap(b => b.paragraphs.flatMap(p => p.lines))) {
    if (!/Tampoi|Kawasan|Jalan|Johor|Lot|No/i.test(l.text)) continue
    const ws = l.words
    const h = ws.map(x=>x.bbox.y1-x.bbox.y0).sort((a,b)=>a-b)[Math.floor(ws.length/2)]
    console.log(id, `h=${h}`, ws.map((x,i)=> (i? `[${ws[i].bbox.x0-ws[i-1].bbox.x1}]`:"")+x.text).join(" "))
  }
}
await w.terminate()
