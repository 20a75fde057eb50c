/** The report of a hostile-input run: what went wrong, grouped, then each failed request. */
import { expect } from "vitest"

export interface HostileFailure {
  /** What the request was: the operation or field, and the input. */
  readonly request: string
  /** What went wrong with the answer. */
  readonly problems: ReadonlyArray<string>
  /** The HTTP status, or "—" when none came. */
  readonly status: string
  /** The start of the answer's body. */
  readonly body: string
}

/** What went wrong, with the values taken out, so that alike failures group together. */
const kindOf = (problem: string) =>
  problem
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\d+/g, "N")
    .slice(0, 120)

const MAX_LINES = 80

export const failureReport = (failures: ReadonlyArray<HostileFailure>, total: number): string => {
  if (failures.length === 0) return ""
  const kinds = new Map<string, { count: number; example: string }>()
  for (const f of failures)
    for (const p of f.problems) {
      const kind = kindOf(p)
      const seen = kinds.get(kind)
      kinds.set(kind, { count: (seen?.count ?? 0) + 1, example: seen?.example ?? f.request })
    }
  const grouped = [...kinds]
    .sort((a, b) => b[1].count - a[1].count)
    .map(([kind, { count, example }]) => `  ${count} × ${kind} (e.g. ${example})`)
  const lines = failures
    .map((f) => `  ${f.request} → ${f.status}: ${f.problems.join("; ")} ${f.body.slice(0, 200)}`.trimEnd())
    .sort()
  return [
    `${failures.length} of ${total} hostile requests failed. By what went wrong:`,
    ...grouped,
    `Each failed request${lines.length > MAX_LINES ? ` (the first ${MAX_LINES})` : ""}:`,
    ...lines.slice(0, MAX_LINES),
  ].join("\n")
}

/** Fails with the report, if anything failed. */
export const expectNoFailures = (failures: ReadonlyArray<HostileFailure>, total: number) => {
  const report = failureReport(failures, total)
  if (report !== "") console.error(report)
  expect(failures.length, report).toBe(0)
}
