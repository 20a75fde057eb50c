/**
 * The parse thread's entry: from dist/ (Runner.js) it imports the compiled thread.js beside it and no
 * loader; from the sources (Runner.ts) it registers tsx, then imports thread.ts. Evaluated in a real
 * worker thread, the compiled entry would fail without a thread.js next to it.
 */
import { describe, expect, it } from "vitest"
import { threadEntry } from "../../src/parsing/Runner.ts"

describe("threadEntry", () => {
  it("from dist/ imports thread.js beside Runner.js, with no TypeScript loader", () => {
    const entry = threadEntry("file:///srv/dxs/packages/pipeline/dist/parsing/Runner.js")
    expect(entry).toBe('import("file:///srv/dxs/packages/pipeline/dist/parsing/thread.js")')
    expect(entry).not.toContain("tsx")
  })

  it("from the sources registers tsx, then imports thread.ts", () => {
    const entry = threadEntry("file:///srv/dxs/packages/pipeline/src/parsing/Runner.ts")
    expect(entry).toMatch(/^import\(".*tsx.*"\)\.then\(\(tsx\) => \{ tsx\.register\(\); return import\(/)
    expect(entry).toContain('import("file:///srv/dxs/packages/pipeline/src/parsing/thread.ts")')
  })
})
