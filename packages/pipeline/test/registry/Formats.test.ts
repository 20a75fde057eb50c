import { documentFormats, supportedExtensions } from "@dxs/domain/DocumentType"
import { describe, expect, it } from "vitest"
import { backendLoaders } from "../../src/parsing/Formats.ts"
import { backendFor, backends, loadBackendFor } from "../../src/parsing/Registry.ts"

describe("the lazy format table", () => {
  it("loads, for every row of the format table, the backend of that name, and every registered backend", async () => {
    const loaded = await Promise.all(documentFormats.map((f) => backendLoaders[f.backend]()))
    documentFormats.forEach((f, i) => {
      expect(loaded[i]!.name, f.extensions.join()).toBe(f.backend)
    })
    expect(new Set(loaded)).toEqual(new Set(backends))
    expect(Object.keys(backendLoaders).sort()).toEqual(documentFormats.map((f) => f.backend).sort())
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

  it("covers exactly the extensions an upload accepts (every other one is refused with 415)", async () => {
    const readable = supportedExtensions.filter((ext) => backendFor(`file.${ext}`) !== undefined)
    expect(readable).toEqual(supportedExtensions)
    for (const ext of supportedExtensions)
      expect(await loadBackendFor(`file.${ext.toUpperCase()}`), ext).toBe(backendFor(`file.${ext}`))
  })
})
