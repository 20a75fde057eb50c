/**
 * Waking a project's queued run: its `run-start` task is made due now and the workers are notified (in the
 * caller's transaction, so the wake-up goes out when it commits), instead of the run looking again later.
 */

import * as RunTasks from "@dxs/db/repositories/RunTasks"
import type { TaskTrx } from "@dxs/db/TaskQueue"
import { Effect } from "effect"

export { RUN_START_TASK } from "@dxs/db/repositories/TaskKinds"

/** Makes the start task of the project's queued run due now; true when there was one to wake. */
export const wakeQueuedRun = (trx: TaskTrx, projectId: string): Promise<boolean> =>
  Effect.runPromise(RunTasks.wakeQueuedRun(trx, projectId))

/** True when the project has a run-start task not yet done (a queued run waits, maybe for parsing). */
export const hasQueuedRunStart = (trx: TaskTrx, projectId: string): Promise<boolean> =>
  Effect.runPromise(RunTasks.hasQueuedRunStart(trx, projectId))
