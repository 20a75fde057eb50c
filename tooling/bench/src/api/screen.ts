/**
 * The requests the web application makes to open a project's screen, recorded in Debian's Chromium (driven
 * by playwright-core): signed in as a member, the screen opened, every GET of the REST API it sends until
 * the network is idle. Without Chromium (CHROMIUM_PATH, or /usr/bin/chromium) there is nothing to record.
 */
import { existsSync } from "node:fs"
import { chromium } from "playwright-core"

export const CHROMIUM = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find(
  (p): p is string => p !== undefined && existsSync(p),
)

/**
 * The REST paths (under /api/v1, with their queries) the project screen reads as it opens, and the session's
 * cookie header to read them again as the screen does.
 */
export const projectScreenRequests = async (options: {
  readonly origin: string
  readonly email: string
  readonly password: string
  readonly projectId: string
}): Promise<{ readonly requests: ReadonlyArray<string>; readonly cookie: string }> => {
  if (CHROMIUM === undefined) return { requests: [], cookie: "" }
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  })
  try {
    const page = await browser.newPage()
    await page.goto(`${options.origin}/sign-in`)
    await page.getByLabel("E-mail").fill(options.email)
    await page.getByLabel("Password").fill(options.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.waitForURL(`${options.origin}/`)
    const seen = new Set<string>()
    page.on("request", (request) => {
      const url = new URL(request.url())
      if (request.method() === "GET" && url.pathname.startsWith("/api/v1/"))
        seen.add(`${url.pathname.slice("/api/v1".length)}${url.search}`)
    })
    await page.goto(`${options.origin}/projects/${options.projectId}`)
    await page.waitForLoadState("networkidle")
    await page.getByRole("heading", { level: 1 }).waitFor()
    const cookies = await page.context().cookies()
    return { requests: [...seen], cookie: cookies.map((c) => `${c.name}=${c.value}`).join("; ") }
  } finally {
    await browser.close()
  }
}
