import { describe, expect, it } from "vitest"
import { type DraftCandidate, isDraftAgent } from "./Draft.ts"

describe("isDraftAgent", () => {
  it.each<[DraftCandidate, boolean]>([
    [{ agent_type: "derived", derived_prompt: "" }, true],
    [{ agent_type: "derived", derived_prompt: "  \n\t " }, true],
    [{ agent_type: "derived", derived_prompt: null }, true],
    [{ agent_type: "derived" }, true],
    [{ agent_type: "derived", derived_prompt: "@Total * 2" }, false],
    [{ agent_type: "extraction", derived_prompt: "" }, false],
    [{ agent_type: "extraction" }, false],
  ])("%j -> %s", (agent, draft) => {
    expect(isDraftAgent(agent)).toBe(draft)
  })
})
