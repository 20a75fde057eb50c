import { extractionTaskKey } from "@dxs/domain/LaunchPlanner"
import { describe, expect, it } from "vitest"
import {
  agentTaskKey,
  archiveSweepTaskKey,
  archiveTaskKey,
  extractTaskKey,
  outputMappingTaskKey,
  parseTaskKey,
  runStartTaskKey,
  webhookDeliverTaskKey,
  webhookFanoutTaskKey,
} from "../src/repositories/TaskKinds.ts"

// The keys of tasks already queued in a deployment must not change: a new format would enqueue them twice.
describe("the catalogue of task kinds", () => {
  it("keeps every kind's idempotency-key format", () => {
    expect(parseTaskKey("d1", 3)).toBe("parse:d1:3")
    expect(parseTaskKey("d1", 3, "r1")).toBe("parse:d1:3:r1")
    expect(runStartTaskKey("r1")).toBe("run-start:r1")
    expect(agentTaskKey("resolve", "a1", "r1")).toBe("resolve:a1:r1")
    expect(agentTaskKey("derive", "a1", "r1")).toBe("derive:a1:r1")
    expect(archiveTaskKey("d1")).toBe("archive:d1")
    expect(archiveSweepTaskKey("2026-01-02")).toBe("archive-sweep:2026-01-02")
    expect(outputMappingTaskKey("p1", 4)).toBe("output-mapping:p1:4")
    expect(webhookFanoutTaskKey("e1")).toBe("webhook-fanout:e1")
    expect(webhookDeliverTaskKey("w1")).toBe("webhook-deliver:w1")
  })

  it("keys an extraction task by its document version, as the launch planner does, and its run", () => {
    const work = { documentId: "d1", documentVersion: 5 }
    expect(extractTaskKey(work, "r1")).toBe(`${extractionTaskKey(work)}:r1`)
    expect(extractTaskKey(work, "r1")).toBe("extract:d1:5:r1")
  })
})
