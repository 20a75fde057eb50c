// Run by vitest before every test file (the shared configuration's setupFiles): registered while the file
// is collected, this afterAll runs the cleanups its helpers asked for, wherever they were started.
import { afterAll } from "vitest"
import { runFileCleanups } from "./FileCleanup.ts"

afterAll(runFileCleanups)
