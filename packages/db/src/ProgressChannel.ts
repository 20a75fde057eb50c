import { listen } from "./Listen.ts"

/**
 * The channel on which PostgreSQL announces that a project's progress may have changed: triggers on the
 * tables that the project and agents status records read (projects, documents, tasks, runs, agents and
 * their dimensions, extraction pairs, resolutions, results, web searches) notify it with the project's
 * id, once per project per statement (and PostgreSQL folds repeats within a transaction), when the
 * transaction commits. Changes that cannot move the progress (a task's heartbeat, a document's summary)
 * notify nothing. The triggers are those of migration `2026_11_25_0001_progress_notifications`.
 */
export const PROGRESS_CHANNEL = "dxs_progress"

/**
 * Calls `onProject(projectId)` whenever a project's progress may have changed (any process), on a
 * connection of its own (see `listen`); `onReconnect` after a lost connection is back (changes may have
 * been missed). Resolves once listening; the returned function stops it.
 */
export const listenForProgress = (
  url: string,
  onProject: (projectId: string) => void,
  onReconnect: () => void,
): Promise<() => Promise<void>> =>
  listen(url, PROGRESS_CHANNEL, {
    onNotify: (payload) => {
      if (payload !== "") onProject(payload)
    },
    onReconnect,
  })
