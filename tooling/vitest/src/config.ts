import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { configDefaults, defineConfig } from "vitest/config"
import { SOURCE_CONDITION } from "./conditions.ts"

/**
 * Test files at once per package. Vitest's default (the cores less one) runs one file at a time on two
 * cores, while a file mostly waits on PostgreSQL, child processes and parse threads; `DXS_TEST_WORKERS`
 * overrides it.
 */
const testWorkers = () => {
  const configured = Number.parseInt(process.env.DXS_TEST_WORKERS ?? "", 10)
  return Number.isInteger(configured) && configured > 0
    ? configured
    : Math.max(3, os.availableParallelism() + 1)
}

/** The setup file that runs each test file's cleanups (by path: not every package depends on @dxs/testing). */
const fileCleanupSetup = fileURLToPath(new URL("../../testing/src/FileCleanupSetup.ts", import.meta.url))

/**
 * Sources whose change reruns every test file of a package whose tests run the compiled build (`build`):
 * those tests reach the code through a child process or a parse thread, which `vitest --changed` (behind
 * `pnpm test:changed`) cannot follow from their imports.
 */
const compiledSources = ["**/packages/*/src/**", "**/apps/*/src/**"]

/**
 * The test configuration every package shares. `database: true` starts one PostgreSQL server per run
 * (embedded, or TEST_DATABASE_URL) with a migrated template; each test file clones its own database.
 * `build` makes the compiled build once, before any test file (no test builds).
 * With DXS_TEST_REPORT_DIR set, a JSON report per package is written there (CI sums them up).
 */
export const testConfig = (options: {
  readonly name: string
  readonly database?: boolean
  readonly timeoutMs?: number
  /**
   * The compiled build its process tests run, made once before the package's test files: `server` (tsc -b)
   * or `all` (with the web application's production build).
   */
  readonly build?: "server" | "all"
  /** Test files at once, when the package's tests must not share the machine with each other. */
  readonly workers?: number
  /**
   * Test files of real-length scenarios (a minute-long outage), left out of the package's run: with
   * `DXS_TEST_LONG=1` they are in it too (`pnpm test:outage` names the one to run).
   */
  readonly long?: ReadonlyArray<string>
  /**
   * Test files left out of CI's second pass (`DXS_TEST_SECOND_PASS=1`, against PostgreSQL 15), whose
   * statements the package's other files send too: they differ by what they send to the server, not by
   * the SQL the server runs.
   */
  readonly firstPassOnly?: ReadonlyArray<string>
  /**
   * Each test file in a fresh process (vitest's default) rather than one process per worker for all the
   * files it runs (`false`, the default here): a REST test file spent about 5 s of CPU importing the
   * server, the pipeline and Effect before its first test, in every file. Files still get their own
   * database, server and worker, and stop them when they end (`afterAll`, or `afterThisFile` from a helper
   * called in a hook). `DXS_TEST_ISOLATE=1` isolates every package (to tell whether a failure comes from
   * another file of the same process).
   */
  readonly isolate?: boolean
}) => {
  const reportDir = process.env.DXS_TEST_REPORT_DIR
  const long = process.env.DXS_TEST_LONG === "1"
  const secondPass = process.env.DXS_TEST_SECOND_PASS === "1"
  // A long run's report is written beside the package's own, not over it.
  const isolate = process.env.DXS_TEST_ISOLATE === "1" || (options.isolate ?? false)
  const workers = options.workers ?? testWorkers()
  const reportName = `${options.name.replace(/[^a-z0-9-]+/gi, "_")}${long ? "-long" : ""}.json`
  return defineConfig({
    // The workspace's packages are tested from their TypeScript sources, never from a build in dist/.
    resolve: { conditions: [SOURCE_CONDITION] },
    ssr: { resolve: { conditions: [SOURCE_CONDITION] } },
    test: {
      name: options.name,
      include: ["src/**/*.test.ts", "test/**/*.test.ts"],
      exclude: [
        ...configDefaults.exclude,
        ...(long ? [] : (options.long ?? [])),
        ...(secondPass ? (options.firstPassOnly ?? []) : []),
      ],
      // Resolved by vitest from the package under test, which has @dxs/testing among its devDependencies.
      globalSetup: [
        ...(options.build === "server" ? ["@dxs/testing/BuildServer"] : []),
        ...(options.build === "all" ? ["@dxs/testing/BuildAll"] : []),
        ...(options.database ? ["@dxs/testing/TestGlobalSetup"] : []),
      ],
      // Every test file runs the cleanups its helpers registered (servers, workers, databases).
      setupFiles: [fileCleanupSetup],
      ...(options.build === undefined
        ? {}
        : { forceRerunTriggers: [...configDefaults.forceRerunTriggers, ...compiledSources] }),
      isolate,
      maxWorkers: workers,
      // Shared workers kept for the whole run: tinypool terminating an idle one (above the minimum)
      // while the run ends rejects with "Terminating worker thread".
      minWorkers: isolate ? 1 : workers,
      testTimeout: options.timeoutMs ?? 30_000,
      hookTimeout: 120_000,
      reporters: reportDir ? ["default", "json"] : ["default"],
      ...(reportDir ? { outputFile: { json: path.join(reportDir, reportName) } } : {}),
    },
  })
}
