// Sums the per-package vitest JSON reports of a CI run (each package's count and time) and prints one
// closing line: "N passed, N failed", after the failures themselves (test name, file and the start of the
// message), so that the end of a CI log says what failed.
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"

const walk = (dir) =>
  readdirSync(dir).flatMap((name) => {
    const full = join(dir, name)
    return statSync(full).isDirectory() ? walk(full) : full.endsWith(".json") ? [full] : []
  })

let passed = 0
let failed = 0
let skipped = 0
const failures = []
const clip = (text) => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes in vitest's messages
  const plain = String(text ?? "").replace(/\u001b\[[0-9;]*m/g, "")
  return plain.length > 1500 ? `${plain.slice(0, 1500)}…` : plain
}
for (const file of walk(process.argv[2])) {
  const report = JSON.parse(readFileSync(file, "utf8"))
  passed += report.numPassedTests ?? 0
  failed += (report.numFailedTests ?? 0) + (report.numRuntimeErrorTestSuites ?? 0)
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0)
  const ended = Math.max(report.startTime ?? 0, ...(report.testResults ?? []).map((t) => t.endTime ?? 0))
  const seconds = report.startTime ? Math.round((ended - report.startTime) / 1000) : "?"
  console.log(`${file}: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${seconds} s`)
  for (const suite of report.testResults ?? []) {
    const failed = (suite.assertionResults ?? []).filter((t) => t.status === "failed")
    for (const t of failed)
      failures.push(`${file}\n  ${suite.name}\n  × ${t.fullName}\n${clip(t.failureMessages?.[0])}`)
    if (suite.status === "failed" && failed.length === 0 && suite.message)
      failures.push(`${file}\n  ${suite.name}\n${clip(suite.message)}`)
  }
}
for (const failure of failures) console.log(`\n== failed: ${failure}`)
console.log(`Tests: ${passed} passed, ${failed} failed, ${skipped} skipped`)
process.exit(failed > 0 || passed === 0 ? 1 : 0)
