/**
 * Waking a project's queued run: its `run-start` task is made due now and the workers are notified (in the
 * caller's transaction, so the wake-up goes out when it commits), instead of the run looking again later.
 */

export { hasQueuedRunStart, wakeQueuedRun } from "@dxs/db/repositories/RunTasks"
export { RUN_START_TASK } from "@dxs/db/repositories/TaskKinds"
