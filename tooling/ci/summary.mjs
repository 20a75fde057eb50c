// Sums the per-package vitest JSON reports of a CI run and prints one closing line: "N passed, N failed".
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
for (const file of walk(process.argv[2])) {
  const report = JSON.parse(readFileSync(file, "utf8"))
  passed += report.numPassedTests ?? 0
  failed += (report.numFailedTests ?? 0) + (report.numRuntimeErrorTestSuites ?? 0)
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0)
  console.log(`${file}: ${report.numPassedTests} passed, ${report.numFailedTests} failed`)
}
console.log(`Tests: ${passed} passed, ${failed} failed, ${skipped} skipped`)
process.exit(failed > 0 || passed === 0 ? 1 : 0)
