/**
 * What a test file started and must stop when it ends (servers, workers, databases, temporary
 * directories), whether it was started at the file's top level, in a `beforeAll` or in a test. Vitest runs
 * an `afterAll` only when it is registered while the file is collected: one registered inside a
 * `beforeAll` (where helpers such as `startTestApi` and `useTestDatabase` are called) is never run. These
 * run after the file's own `afterAll` hooks, the last registered first; one that fails does not keep the
 * others from running, and the file then fails with every failure.
 */
const pending: Array<() => unknown> = []

/** Runs `cleanup` when the current test file ends (see above). */
export const afterThisFile = (cleanup: () => unknown): void => {
  pending.push(cleanup)
}

/** Runs the file's cleanups: registered for every test file by the shared configuration's setup file. */
export const runFileCleanups = async (): Promise<void> => {
  const failures: Array<unknown> = []
  for (const cleanup of pending.splice(0).reverse()) {
    try {
      await cleanup()
    } catch (e) {
      failures.push(e)
    }
  }
  if (failures.length === 1) throw failures[0]
  if (failures.length > 1) throw new AggregateError(failures, "cleanups after the test file failed")
}
