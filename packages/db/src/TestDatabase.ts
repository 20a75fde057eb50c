import { afterAll, inject } from "vitest"
import { createTestDatabase } from "./Testing.ts"

/** In a test file: a fresh migrated database for this file, dropped after it. */
export const useTestDatabase = async (): Promise<string> => {
  const { url, drop } = await createTestDatabase(inject("dxsTemplateUrl"))
  afterAll(drop)
  return url
}
