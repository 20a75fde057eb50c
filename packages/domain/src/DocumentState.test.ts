import * as Either from "effect/Either"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  blocksLaunch,
  DocumentEvent,
  type DocumentState,
  transitionDocument,
  uploadedDocument,
} from "./DocumentState.ts"

const pending = (version: number): DocumentState => ({ status: "Pending", version })
const processed = (version: number): DocumentState => ({ status: "Processed", version })
const failed = (version: number): DocumentState => ({ status: "Failed", version })

describe("document state machine", () => {
  it("starts Pending at version 1 after upload", () => {
    expect(uploadedDocument()).toEqual({ status: "Pending", version: 1 })
  })

  it.each([
    ["Pending + parse success", pending(1), DocumentEvent.ParseSucceeded({ version: 1 }), processed(1)],
    ["Pending + parse failure", pending(2), DocumentEvent.ParseFailed({ version: 2 }), failed(2)],
    ["Processed + reprocess", processed(1), DocumentEvent.Reprocess(), pending(2)],
    ["Failed + replace", failed(3), DocumentEvent.Reprocess(), pending(4)],
  ])("%s", (_, state, event, next) => {
    expect(transitionDocument(state, event)).toEqual(Either.right(next))
  })

  it.each([
    ["Processed + parse success", processed(1), DocumentEvent.ParseSucceeded({ version: 1 }), "not_allowed"],
    ["Failed + parse success", failed(1), DocumentEvent.ParseSucceeded({ version: 1 }), "not_allowed"],
    ["Processed + parse failure", processed(1), DocumentEvent.ParseFailed({ version: 1 }), "not_allowed"],
    ["Pending + reprocess", pending(1), DocumentEvent.Reprocess(), "not_allowed"],
    ["stale parse success", pending(2), DocumentEvent.ParseSucceeded({ version: 1 }), "stale_version"],
    ["stale parse failure", pending(2), DocumentEvent.ParseFailed({ version: 1 }), "stale_version"],
  ])("%s is refused", (_, state, event, reason) => {
    const result = transitionDocument(state, event)
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) {
      expect(result.left._tag).toBe("InvalidTransition")
      expect(result.left.reason).toBe(reason)
      expect(result.left.from).toBe(state.status)
      expect(result.left.event).toBe(event._tag)
      expect(result.left.message).toContain(event._tag)
    }
  })

  it("only Failed documents block a launch", () => {
    expect([pending(1), processed(1), failed(1)].map(blocksLaunch)).toEqual([false, false, true])
  })

  it("property: versions never decrease and move only on reprocess, by one", () => {
    const event = fc.oneof(
      fc.integer({ min: 0, max: 4 }).map((version) => DocumentEvent.ParseSucceeded({ version })),
      fc.integer({ min: 0, max: 4 }).map((version) => DocumentEvent.ParseFailed({ version })),
      fc.constant(DocumentEvent.Reprocess()),
    )
    fc.assert(
      fc.property(fc.array(event, { maxLength: 30 }), (events) => {
        let state = uploadedDocument()
        for (const e of events) {
          const result = transitionDocument(state, e)
          if (Either.isLeft(result)) continue
          const next = result.right
          expect(next.version).toBe(e._tag === "Reprocess" ? state.version + 1 : state.version)
          expect(next.status === "Pending").toBe(e._tag === "Reprocess")
          state = next
        }
      }),
    )
  })
})
