// Module hooks (node:module register): every module's URL appended to the file DXS_LOADED_MODULES names.
import { appendFileSync } from "node:fs"

export async function load(url, context, nextLoad) {
  if (process.env.DXS_LOADED_MODULES) appendFileSync(process.env.DXS_LOADED_MODULES, `${url}\n`)
  return nextLoad(url, context)
}
