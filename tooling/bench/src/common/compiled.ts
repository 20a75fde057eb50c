/**
 * The benchmarks that start `dxs` run what `./dx start` runs: the compiled CLI (apps/cli/dist), built first
 * (`tsc -b`, nothing to do when nothing changed; the web application is not needed).
 */
import { execFileSync } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..")

/** The compiled CLI's entry. */
export const compiledDxs = path.join(root, "apps/cli/dist/main.js")

/**
 * The Node options `./dx start`, `pnpm start` and the container image run the server with: Node 22 and newer
 * size the young generation by the machine's memory (up to 3 × 64 MB on a large machine, most of it grown at
 * start-up and never returned), where 16 MB semi-spaces (Node 20's size) cost no measurable throughput. And
 * no allocation-site pretenuring: V8 otherwise allocates straight in the old generation the objects of the
 * sites whose objects it saw survive a young collection, and a server's request objects (alive while ten
 * requests are in flight, dead once answered) made every young collection slower and full ones more
 * frequent. The grid's page of 50 rows under load, the same server with and without it: young collections
 * 3.0 → 1.95 ms each, 16 → 11–12 full collections in 10 s, 5,000 → 6,000 requests answered.
 */
export const dxsNodeFlags = ["--max-semi-space-size=16", "--no-allocation-site-pretenuring"]

let built: "server" | "web" | undefined

/** Builds the packages and apps once per benchmark process (the web application too with `web`). */
export const buildDxs = (options: { readonly web?: boolean } = {}) => {
  if (built === "web" || (built === "server" && !options.web)) return
  execFileSync(
    process.execPath,
    [path.join(root, "tooling/build/build.mjs"), ...(options.web ? [] : ["--no-web"])],
    {
      cwd: root,
      stdio: ["ignore", "ignore", "inherit"],
    },
  )
  built = options.web ? "web" : "server"
}
