import { supportedExtensions } from "@dxs/domain/DocumentType"
import { describe, expect, it } from "vitest"
import { formats, loadBackendFor } from "../../src/parsing/Formats.ts"
import { backendFor, backends } from "../../src/parsing/Registry.ts"

describe("the lazy format table", () => {
  it("names exactly the extensions of each backend it loads, and every registered backend", async () => {
    const loaded = await Promise.all(formats.map((f) => f.load()))
    formats.forEach((f, i) => {
      expect([...f.extensions].sort(), loaded[i]!.name).toEqual([...loaded[i]!.extensions].sort())
    })
    expect(new Set(loaded)).toEqual(new Set(backends))
  })

  it("finds the same backend as the registry, in any case, and none for unknown extensions", async () => {
    for (const name of [
      "a.PDF",
      "b.docx",
      "c.xlsx",
      "d.csv",
      "e.pptx",
      "f.eml",
      "g.html",
      "h.txt",
      "i.tiff",
      "j.mp3",
    ]) {
      expect(await loadBackendFor(name), name).toBe(backendFor(name))
    }
    expect(await loadBackendFor("archive.xyz")).toBeUndefined()
    expect(await loadBackendFor("no-extension")).toBeUndefined()
  })

  it("covers exactly the extensions an upload accepts (every other one is refused with 415)", () => {
    const readable = formats.flatMap((f) => f.extensions.map((e) => e.slice(1))).sort()
    expect(readable).toEqual([...supportedExtensions].sort())
  })
})
