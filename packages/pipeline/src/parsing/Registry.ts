import type { Backend } from "./Backend.ts"

/**
 * Every format backend, keyed by extension. Adding a format = one backend file + one line here + one
 * fixture folder.
 */
export const backends: ReadonlyArray<Backend> = []

export const backendFor = (fileName: string): Backend | undefined => {
  const dot = fileName.lastIndexOf(".")
  const ext = dot > 0 ? fileName.slice(dot).toLowerCase() : ""
  return backends.find((b) => b.extensions.includes(ext))
}
