/**
 * File-edit rules (filling a template from a project's resolved results): placeholders `{{Agent name}}` and
 * `{{Agent name | Dimension=value, Other=value}}`, what each one resolves to, and the tables of a spreadsheet
 * whose header row names agents and dimensions. Pure: the formats themselves are read and written by the
 * pipeline (`packages/pipeline/src/fileedit`).
 */

/** The formats a template may have. */
export type TemplateFormat = "xlsx" | "docx"

/** Bounds of one job. */
export const FILE_EDIT_MAX_PLACEHOLDERS = 10_000
export const FILE_EDIT_MAX_ROWS = 100_000

/** A placeholder's text between `{{` and `}}`, read. */
export interface Placeholder {
  /** The agent's name as written, trimmed. */
  readonly agent: string
  /** `Dimension=value` pairs as written (trimmed), in order. */
  readonly qualifiers: ReadonlyArray<{ readonly dimension: string; readonly value: string }>
}

/** What a placeholder could not be, said so that the author of the template knows what to change. */
export interface PlaceholderProblem {
  /** The placeholder as written, with its braces. */
  readonly placeholder: string
  /** `Sheet1!B4`, `paragraph 12`, … */
  readonly location: string
  readonly message: string
}

/** An agent as a template sees it. */
export interface TemplateAgent {
  readonly name: string
  readonly valueType: string
  /** What is shown when the agent found nothing (`value_if_not_found`). */
  readonly valueIfNotFound: string
  /** The names of the dimensions that split its results. */
  readonly dimensions: ReadonlyArray<string>
}

/** One current result: its agent and the dimension values of its combination (by dimension name). */
export interface TemplateResult {
  readonly agent: string
  readonly dimensionValues: Readonly<Record<string, string>>
  /** The resolved value as stored (null when nothing was found). */
  readonly value: unknown
  readonly status: string
}

/** A filled-in value: a number stays a number (a spreadsheet cell that is only the placeholder gets it). */
export type FilledValue = string | number

export type Resolution =
  | { readonly ok: true; readonly value: FilledValue }
  | { readonly ok: false; readonly message: string }

const PLACEHOLDER = /\{\{([^{}]*)\}\}/g

/** Every `{{…}}` in `text`, with its inner text and its place. */
export const placeholdersIn = (
  text: string,
): Array<{ readonly raw: string; readonly inner: string; readonly index: number }> =>
  Array.from(text.matchAll(PLACEHOLDER), (m) => ({ raw: m[0], inner: m[1] ?? "", index: m.index ?? 0 }))

/** Whether the whole of `text` (spaces around aside) is one placeholder. */
export const isWholePlaceholder = (text: string): boolean => {
  const found = placeholdersIn(text)
  return found.length === 1 && found[0]!.raw === text.trim()
}

/** Names compare without case and surrounding or repeated spaces. */
export const nameKey = (name: string): string => name.replace(/\s+/g, " ").trim().toLowerCase()

/** Reads a placeholder's inner text (`Agent | Dim=value, Dim2=value`); a message when it is malformed. */
export const parsePlaceholder = (
  inner: string,
):
  | { readonly ok: true; readonly placeholder: Placeholder }
  | { readonly ok: false; readonly message: string } => {
  const bar = inner.indexOf("|")
  const agent = (bar < 0 ? inner : inner.slice(0, bar)).trim()
  if (agent === "")
    return {
      ok: false,
      message: "The placeholder names no agent: write {{Agent name}} with an agent's name.",
    }
  if (bar < 0) return { ok: true, placeholder: { agent, qualifiers: [] } }
  const qualifiers: Array<{ dimension: string; value: string }> = []
  for (const part of inner.slice(bar + 1).split(",")) {
    if (part.trim() === "") continue
    const eq = part.indexOf("=")
    const dimension = eq < 0 ? "" : part.slice(0, eq).trim()
    const value = eq < 0 ? "" : part.slice(eq + 1).trim()
    if (dimension === "" || value === "")
      return {
        ok: false,
        message: `"${part.trim()}" is not a Dimension=value pair: write {{${agent} | Dimension=value}}, several pairs separated by commas.`,
      }
    qualifiers.push({ dimension, value })
  }
  if (qualifiers.length === 0)
    return {
      ok: false,
      message: `Nothing follows "|": write {{${agent} | Dimension=value}}, or {{${agent}}} without "|".`,
    }
  return { ok: true, placeholder: { agent, qualifiers } }
}

/** The value of a result as the results show it: numbers of `number` agents as numbers. */
export const displayedValue = (agent: TemplateAgent, result: TemplateResult): FilledValue => {
  const stored = result.value
  if (stored === null || stored === undefined || stored === "") return agent.valueIfNotFound || "n/a"
  if (agent.valueType === "number") {
    if (typeof stored === "number") return stored
    if (typeof stored === "string" && /^-?\d+(\.\d+)?$/.test(stored.trim())) return Number(stored.trim())
  }
  if (typeof stored === "string") return stored
  if (typeof stored === "number" || typeof stored === "boolean") return String(stored)
  return JSON.stringify(stored)
}

/** The text of a filled value inside other text. */
export const valueText = (value: FilledValue): string => String(value)

const describeCombination = (values: Readonly<Record<string, string>>) =>
  Object.entries(values)
    .map(([d, v]) => `${d}=${v}`)
    .join(", ")

/** What templates are filled from: the project's agents and current results, looked up by name. */
export interface ResultIndex {
  readonly agent: (name: string) => TemplateAgent | undefined
  /** The agent's results (any order). */
  readonly resultsOf: (agent: TemplateAgent) => ReadonlyArray<TemplateResult>
  /** Whether `name` is a dimension of the project (any agent's). */
  readonly isDimension: (name: string) => boolean
  /** The dimension's name as the project spells it. */
  readonly dimensionName: (name: string) => string | undefined
}

export const resultIndex = (
  agents: ReadonlyArray<TemplateAgent>,
  results: ReadonlyArray<TemplateResult>,
  dimensionNames: ReadonlyArray<string>,
): ResultIndex => {
  const byName = new Map(agents.map((a) => [nameKey(a.name), a]))
  const resultsByAgent = new Map<string, Array<TemplateResult>>()
  for (const r of results) {
    const key = nameKey(r.agent)
    const list = resultsByAgent.get(key)
    if (list) list.push(r)
    else resultsByAgent.set(key, [r])
  }
  const dimensions = new Map(dimensionNames.map((d) => [nameKey(d), d]))
  for (const a of agents)
    for (const d of a.dimensions) if (!dimensions.has(nameKey(d))) dimensions.set(nameKey(d), d)
  return {
    agent: (name) => byName.get(nameKey(name)),
    resultsOf: (agent) => resultsByAgent.get(nameKey(agent.name)) ?? [],
    isDimension: (name) => dimensions.has(nameKey(name)),
    dimensionName: (name) => dimensions.get(nameKey(name)),
  }
}

/** The value of dimension `dimension` in a result (its name compared without case). */
const dimensionValueOf = (result: TemplateResult, dimension: string): string | undefined => {
  const key = nameKey(dimension)
  for (const [d, v] of Object.entries(result.dimensionValues)) if (nameKey(d) === key) return v
  return undefined
}

/** What placeholder `inner` (the text between the braces) is filled with, or why it cannot be. */
export const resolvePlaceholder = (index: ResultIndex, inner: string): Resolution => {
  const parsed = parsePlaceholder(inner)
  if (!parsed.ok) return parsed
  const { agent: name, qualifiers } = parsed.placeholder
  const agent = index.agent(name)
  if (agent === undefined)
    return {
      ok: false,
      message: `No agent is named "${name}": correct the name in the template or create the agent, then fill again.`,
    }
  for (const q of qualifiers) {
    if (!agent.dimensions.some((d) => nameKey(d) === nameKey(q.dimension)))
      return {
        ok: false,
        message: index.isDimension(q.dimension)
          ? `The agent "${agent.name}" is not split by the dimension "${q.dimension}": remove "${q.dimension}=${q.value}"${
              agent.dimensions.length > 0
                ? ` or use one of its dimensions (${agent.dimensions.join(", ")})`
                : ""
            }.`
          : `No dimension is named "${q.dimension}"${
              agent.dimensions.length > 0
                ? `: the agent "${agent.name}" is split by ${agent.dimensions.join(", ")}`
                : ""
            }. Correct the qualifier.`,
      }
  }
  const results = index.resultsOf(agent)
  const matching = results.filter((r) =>
    qualifiers.every((q) => nameKey(dimensionValueOf(r, q.dimension) ?? "\u0000") === nameKey(q.value)),
  )
  if (results.length === 0)
    return {
      ok: false,
      message: `The agent "${agent.name}" has no result yet: launch the pipeline, then fill the template again.`,
    }
  if (matching.length === 0) {
    const q = qualifiers.find(
      (q) => !results.some((r) => nameKey(dimensionValueOf(r, q.dimension) ?? "") === nameKey(q.value)),
    )
    return {
      ok: false,
      message:
        q === undefined
          ? `The agent "${agent.name}" has no result for ${qualifiers.map((x) => `${x.dimension}=${x.value}`).join(", ")}: check the values.`
          : `The dimension "${q.dimension}" has no value "${q.value}" among the results of "${agent.name}": use one of ${listValues(results, q.dimension)}.`,
    }
  }
  if (matching.length > 1) {
    const missing = agent.dimensions.filter(
      (d) => !qualifiers.some((q) => nameKey(q.dimension) === nameKey(d)),
    )
    return {
      ok: false,
      message: `The agent "${agent.name}" has ${matching.length} results (one per ${missing.join(", ")}): pick one, for example {{${agent.name} | ${describeCombination(
        Object.fromEntries(missing.map((d) => [d, dimensionValueOf(matching[0]!, d) ?? "…"])),
      )}}}.`,
    }
  }
  return { ok: true, value: displayedValue(agent, matching[0]!) }
}

const listValues = (results: ReadonlyArray<TemplateResult>, dimension: string) => {
  const values = [
    ...new Set(results.map((r) => dimensionValueOf(r, dimension)).filter((v) => v !== undefined)),
  ]
  const shown = values.slice(0, 5).map((v) => `"${v}"`)
  return values.length > 5 ? `${shown.join(", ")}, …` : shown.join(", ")
}

// ---------------------------------------------------------------------------------------------------------
// Spreadsheet tables: a header row of agent and dimension names, filled below with one row per combination

/** A header cell: its column and what it names. */
export type HeaderColumn =
  | { readonly column: number; readonly kind: "agent"; readonly agent: TemplateAgent }
  | { readonly column: number; readonly kind: "dimension"; readonly dimension: string }

/**
 * The columns of a header row, when `cells` (column → text of the non-empty cells) is one: every non-empty
 * cell is an agent's or a dimension's name, and at least one an agent's. Otherwise undefined.
 */
export const headerColumns = (
  index: ResultIndex,
  cells: ReadonlyArray<{ readonly column: number; readonly text: string }>,
): ReadonlyArray<HeaderColumn> | undefined => {
  const columns: Array<HeaderColumn> = []
  for (const { column, text } of cells) {
    if (text.trim() === "") continue
    const agent = index.agent(text)
    if (agent !== undefined) columns.push({ column, kind: "agent", agent })
    else {
      const dimension = index.dimensionName(text)
      if (dimension === undefined) return undefined
      columns.push({ column, kind: "dimension", dimension })
    }
  }
  return columns.some((c) => c.kind === "agent") ? columns : undefined
}

/** The rows a header row is filled with (each: column → value), and the problems met. */
export interface TableFill {
  readonly rows: ReadonlyArray<ReadonlyArray<{ readonly column: number; readonly value: FilledValue }>>
  readonly problems: ReadonlyArray<string>
}

// One collator for every comparison: `localeCompare` with options builds a new one at each call.
const compareText = new Intl.Collator("en", { numeric: true }).compare

/**
 * One row per combination of the header's dimension values: the combinations of the results of the agents
 * split by every dimension of the header (all of the agents when the header has no dimension column: one
 * row), in order of their values. An agent column holds the agent's result for the row's values; an agent
 * split by a dimension that is not a column is reported and its column left empty.
 */
export const fillTable = (index: ResultIndex, columns: ReadonlyArray<HeaderColumn>): TableFill => {
  const dimensions = columns.flatMap((c) => (c.kind === "dimension" ? [c.dimension] : []))
  const agents = columns.flatMap((c) => (c.kind === "agent" ? [c] : []))
  const problems: Array<string> = []
  const usable = agents.filter(({ agent }) => {
    const extra = agent.dimensions.filter((d) => !dimensions.some((x) => nameKey(x) === nameKey(d)))
    if (extra.length > 0)
      problems.push(
        `The agent "${agent.name}" is split by ${extra.join(", ")}, which ${extra.length === 1 ? "is not a column" : "are not columns"} of the table: add ${extra.length === 1 ? "that column" : "those columns"} to the header row, or its column stays empty.`,
      )
    return extra.length === 0
  })
  const full = usable.filter(({ agent }) => agent.dimensions.length === dimensions.length)
  const combinations = new Map<string, ReadonlyArray<string>>()
  if (dimensions.length === 0) combinations.set("[]", [])
  else
    for (const { agent } of full)
      for (const r of index.resultsOf(agent)) {
        const values = dimensions.map((d) => dimensionValueOf(r, d) ?? "")
        combinations.set(JSON.stringify(values.map(nameKey)), values)
      }
  if (dimensions.length > 0 && full.length === 0)
    problems.push(
      `No agent of the table is split by exactly ${dimensions.join(", ")}: the rows cannot be made. Keep the dimension columns of the agents' dimensions.`,
    )
  const ordered = [...combinations.values()].sort((a, b) => {
    for (let i = 0; i < a.length; i++) {
      const c = compareText(a[i]!, b[i]!)
      if (c !== 0) return c
    }
    return 0
  })
  const rows = ordered.map((values) => {
    const row: Array<{ column: number; value: FilledValue }> = []
    for (const c of columns) {
      if (c.kind === "dimension")
        row.push({ column: c.column, value: values[dimensions.indexOf(c.dimension)] ?? "" })
      else if (usable.includes(c)) {
        const result = index
          .resultsOf(c.agent)
          .find((r) =>
            c.agent.dimensions.every(
              (d) =>
                nameKey(dimensionValueOf(r, d) ?? "\u0000") ===
                nameKey(values[dimensions.findIndex((x) => nameKey(x) === nameKey(d))] ?? ""),
            ),
          )
        if (result !== undefined) row.push({ column: c.column, value: displayedValue(c.agent, result) })
      }
    }
    return row
  })
  if (agents.some(({ agent }) => index.resultsOf(agent).length === 0))
    problems.push(
      `${agents
        .filter(({ agent }) => index.resultsOf(agent).length === 0)
        .map(({ agent }) => `"${agent.name}"`)
        .join(
          ", ",
        )} ${agents.filter(({ agent }) => index.resultsOf(agent).length === 0).length === 1 ? "has" : "have"} no result yet: launch the pipeline, then fill the template again.`,
    )
  return { rows, problems }
}

/** A spreadsheet cell's address: column 1 → `A`, row 4 → `A4`. */
export const cellAddress = (sheet: string, column: number, row: number): string => {
  let letters = ""
  for (let n = column; n > 0; n = Math.floor((n - 1) / 26))
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters
  const quoted = /^[A-Za-z0-9_]+$/.test(sheet) ? sheet : `'${sheet.replace(/'/g, "''")}'`
  return `${quoted}!${letters}${row}`
}
