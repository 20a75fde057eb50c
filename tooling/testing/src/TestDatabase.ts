import { inject } from "vitest"
import { afterThisFile } from "./FileCleanup.ts"
// Brings the typing of inject("dxsTemplateUrl") to every package that uses this helper.
import type {} from "./TestGlobalSetup.ts"
import { createTestDatabase } from "./TestPostgres.ts"

/** In a test file: a fresh migrated database for this file, dropped after it. */
export const useTestDatabase = async (): Promise<string> => {
  const { url, drop } = await createTestDatabase(inject("dxsTemplateUrl"))
  afterThisFile(drop)
  return url
}
