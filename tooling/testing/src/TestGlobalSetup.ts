import type { TestProject } from "vitest/node"
import { startTestServer } from "./TestPostgres.ts"

declare module "vitest" {
  export interface ProvidedContext {
    dxsTemplateUrl: string
  }
}

export default async function setup(project: TestProject) {
  const server = await startTestServer()
  project.provide("dxsTemplateUrl", server.templateUrl)
  return () => server.stop()
}
