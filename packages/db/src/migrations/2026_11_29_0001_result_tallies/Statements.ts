// Frozen, as the migration that uses it: never import application code here.
// What the tally triggers of `2026_11_29_0001_result_tallies` share.

export const STATUSES = [
  ["resolved", "Resolved"],
  ["requires_attention", "Requires attention"],
  ["not_resolved", "Not resolved"],
  ["ignored", "Ignored"],
  ["no_result", "No result"],
] as const

export const statusColumns = STATUSES.map(([c]) => c)

export type TriggerEvent = "insert" | "update" | "delete"

export const REFERENCING: Record<TriggerEvent, string> = {
  insert: "new table as new_rows",
  update: "old table as old_rows new table as new_rows",
  delete: "old table as old_rows",
}

/**
 * Per event, what a statement changed as rows of `columns` with `d`: +1 for each row after the statement,
 * -1 for each row before it (only the rows where `where` holds; `slot`, when given, is added as a column).
 */
export const changesByEvent = (
  columns: string,
  where: string,
  extra = "",
): ReadonlyArray<readonly [TriggerEvent, string]> => {
  const side = (rows: string, d: number) => `select ${columns}${extra}, ${d} as d from ${rows} where ${where}`
  return [
    ["insert", side("new_rows", 1)],
    ["update", `${side("new_rows", 1)} union all ${side("old_rows", -1)}`],
    ["delete", side("old_rows", -1)],
  ]
}
