/**
 * What the next launch would do and cost, without launching: the launch planner over the project's state
 * as the launch loads it (`loadProjectState`, `toSnapshot`, `planLaunch`), and the model requests of its
 * extraction pairs as the extraction stage would shape them (`estimateDocumentRequests` under the request
 * budget), from the text lengths of the documents' pages.
 *
 * The plan is the one a run would make when it starts: a run running now or parsing in flight only
 * delays that start, so they are left out of the snapshot; documents that failed processing make the
 * launch refused, and are left out of the figures, which then say what the launch would do once they are
 * removed.
 */
import type { Conn } from "@dxs/db"
import { pageTextLengthsOfDocuments } from "@dxs/db/repositories/Pages"
import { byDocument, type FailedDocument, planLaunch } from "@dxs/domain/LaunchPlanner"
import {
  addEstimates,
  estimateDocumentRequests,
  noRequests,
  type RequestBudget,
  type RequestEstimate,
} from "@dxs/domain/ModelRequests"
import { Effect } from "effect"
import { loadProjectState, toSnapshot } from "./ProjectState.ts"

export interface LaunchEstimate {
  readonly extractionPairs: number
  /** Documents with at least one outstanding pair. */
  readonly documents: number
  /** Extraction agents with at least one outstanding pair. */
  readonly agents: number
  /** Documents with outstanding pairs that are not parsed yet: not in the request estimate. */
  readonly documentsNotParsed: number
  readonly requests: RequestEstimate
  /** Why the launch would be refused, if it would be. */
  readonly rejected:
    | {
        readonly status: 409 | 400
        readonly detail: string
        readonly failedDocuments: ReadonlyArray<FailedDocument>
      }
    | undefined
}

export const previewLaunch = (
  db: Conn,
  projectId: string,
  budget: RequestBudget,
): Effect.Effect<LaunchEstimate> =>
  Effect.gen(function* () {
    const state = yield* loadProjectState(db, projectId)
    const snapshot = toSnapshot({ ...state, run: { running: false, queued: false } })
    const asStarted = {
      ...snapshot,
      documents: snapshot.documents.map((d) => ({ ...d, parseInFlight: false })),
    }
    const decision = planLaunch(asStarted)
    let rejected: LaunchEstimate["rejected"]
    let plan = decision
    if (decision._tag === "Rejected") {
      rejected = { status: 409, detail: decision.message, failedDocuments: decision.failedDocuments }
      plan = planLaunch({ ...asStarted, documents: asStarted.documents.filter((d) => d.status !== "Failed") })
    }
    if (plan._tag === "CyclicReferences")
      return {
        extractionPairs: 0,
        documents: 0,
        agents: 0,
        documentsNotParsed: 0,
        requests: noRequests,
        rejected: { status: 400, detail: plan.message, failedDocuments: rejected?.failedDocuments ?? [] },
      } satisfies LaunchEstimate
    const pairs = plan._tag === "Plan" ? plan.extract : []
    // The extraction tasks the run would enqueue: one per document, with its outstanding agents.
    const work = byDocument(pairs)
    const lengths = yield* pageTextLengthsOfDocuments(
      db,
      work.map((w) => w.documentId),
    )
    let requests = noRequests
    let documentsNotParsed = 0
    const statusOf = new Map(asStarted.documents.map((d) => [d.id, d.status]))
    for (const w of work) {
      if (statusOf.get(w.documentId) !== "Processed") documentsNotParsed += 1
      else
        requests = addEstimates(
          requests,
          estimateDocumentRequests(lengths.get(w.documentId) ?? [], w.agents.length, budget),
        )
    }
    return {
      extractionPairs: pairs.length,
      documents: work.length,
      agents: new Set(pairs.map((p) => p.agentId)).size,
      documentsNotParsed,
      requests,
      rejected,
    } satisfies LaunchEstimate
  })
