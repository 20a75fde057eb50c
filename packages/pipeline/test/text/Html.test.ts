import { describe, expect, it } from "vitest"
import { htmlBackend, htmlToText } from "../../src/parsing/Html.ts"
import { pageChars } from "../../src/parsing/TextPages.ts"
import { parseWith } from "../support.ts"
import { expectGolden, expectTextPages, failureReason, input } from "./golden.ts"

const here = new URL("./", import.meta.url)
const utf8 = (text: string) => new TextEncoder().encode(text)

const page = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Acme Corp &ndash; Annual Report 2023</title>
  <meta name="viewport" content="width=device-width">
  <meta content="Revenue, profit &amp; outlook of Acme Corp for the year 2023." name="description">
  <style>body { font-family: sans-serif } .hidden { display: none }</style>
  <script>window.analytics = { track: function () { return "tracking code" } }</script>
</head>
<body>
  <nav><a href="/">Home</a> <a href="/reports">Reports</a></nav>
  <main>
    <h1>Annual Report 2023</h1>
    <p>Acme Corp had a <strong>strong</strong> year. See the <a href="https://example.com/full.pdf">full report</a>.</p>
    <h2>Highlights</h2>
    <ul>
      <li>Revenue grew by 12%</li>
      <li>New offices:
        <ol><li>Berlin</li><li>S&atilde;o Paulo</li></ol>
      </li>
    </ul>
    <table>
      <caption>Key figures</caption>
      <thead><tr><th>Metric</th><th>2022</th><th>2023</th></tr></thead>
      <tbody>
        <tr><td>Revenue</td><td>$1,200,000</td><td>$1,344,000</td></tr>
        <tr><td>Net profit</td><td>$150,000</td><td>$201,600</td></tr>
      </tbody>
    </table>
    <p>Chart: <img src="chart.png" alt="Revenue by quarter"> <img src="spacer.gif"></p>
    <pre>  Signed,
    The Board</pre>
    <noscript>Please enable JavaScript.</noscript>
    <svg width="10" height="10"><title>icon</title><circle r="4"/></svg>
  </main>
  <footer>&copy; 2024 Acme Corp</footer>
  <script src="/app.js"></script>
</body>
</html>
`

/** An older page in windows-1252 that declares ISO-8859-1 in a meta element, and has no description. */
const legacy = Buffer.concat([
  Buffer.from(
    '<HTML><HEAD><META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=iso-8859-1"><TITLE>Caf\xe9 menu</TITLE></HEAD>\n<BODY BGCOLOR=white><H3>Men\xfa</H3><P>Cr\xe8me br\xfbl\xe9e ',
    "latin1",
  ),
  Buffer.from([0x80]),
  Buffer.from("4<BR>Caf\xe9 au lait \x80 2</P></BODY></HTML>", "latin1"),
])

describe("html backend", () => {
  it("parses a web page like its golden output: readable text, title and description", async () => {
    const output = await parseWith(
      htmlBackend,
      input("report.html", utf8(page), { contentType: "text/html" }),
    )
    expectTextPages(output)
    await expectGolden(here, "report.html", output)
    const text = output.pages[0]!.text
    expect(text).not.toMatch(/tracking code|font-family|enable JavaScript|icon|https:\/\//)
    expect(text).toContain("Revenue | $1,200,000 | $1,344,000")
    expect(output.metadata).toMatchObject({
      title: "Acme Corp – Annual Report 2023",
      description: "Revenue, profit & outlook of Acme Corp for the year 2023.",
      language: "en",
      encoding: "utf-8",
    })
  })

  it("decodes a legacy page in the charset it declares", async () => {
    const output = await parseWith(
      htmlBackend,
      input("menu.htm", new Uint8Array(legacy), { contentType: "text/html" }),
    )
    await expectGolden(here, "menu.htm", output)
    expect(output.metadata).toMatchObject({ title: "Café menu", encoding: "windows-1252" })
    expect(output.pages[0]!.text).toBe("Menú\n\nCrème brûlée €4\nCafé au lait € 2")
  })

  it("takes the charset of the upload's Content-Type before the page's own", async () => {
    const bytes = new Uint8Array(Buffer.from("<p>Gr\xfc\xdfe</p>", "latin1"))
    const output = await parseWith(
      htmlBackend,
      input("a.html", bytes, { contentType: "text/html; charset=ISO-8859-15" }),
    )
    expect(output.pages[0]!.text).toBe("Grüße")
    expect(output.metadata.encoding).toBe("iso-8859-15")
  })

  it("cuts a long page into pages", async () => {
    const paragraphs = Array.from(
      { length: 80 },
      (_, i) => `<p>Paragraph ${i + 1}: ${"lorem ipsum ".repeat(10)}</p>`,
    )
    const output = await parseWith(
      htmlBackend,
      input("long.html", utf8(`<body>${paragraphs.join("")}</body>`)),
    )
    expect(output.pages.length).toBeGreaterThan(2)
    expect(output.metadata.page_source).toBe(`chunks of ${pageChars} characters`)
    for (const p of output.pages) expect(p.text).toMatch(/^Paragraph \d+:/)
    expect(output.pages.at(-1)!.text).toContain("Paragraph 80:")
  })

  it("survives hostile markup: deep nesting, unclosed tags, a huge <pre> of spaces", async () => {
    const deep = `${"<div>".repeat(50_000)}deep${"</div>".repeat(50_000)}`
    const broken = "<table><tr><td>a<td>b<tr><td>c</table><p>unclosed <b>bold <i>italic"
    const spaces = `<pre>${" ".repeat(1_000_000)}x</pre>`
    for (const html of [deep, broken, spaces]) {
      const output = await parseWith(htmlBackend, input("hostile.html", utf8(html)))
      expect(output.pages.length).toBeGreaterThanOrEqual(1)
    }
    expect(htmlToText(broken)).toBe("a | b\nc\n\nunclosed bold italic")
  })

  it("refuses a binary file", async () => {
    const random = new Uint8Array(4096).map((_, i) => (i * 7919 + 13) % 256)
    expect(await failureReason(htmlBackend, input("random.html", random))).toBe(
      "the file is not an HTML page (it looks binary)",
    )
  })
})
