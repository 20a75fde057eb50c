import { type RawBuilder, sql } from "kysely"

/**
 * A value behind a sub-select, where PostgreSQL's planner cannot read it. A prepared statement is planned
 * for its values five times, then kept as one generic plan unless the values' own plans look cheaper: a
 * value the planner has statistics for (a project's share of the results, a rare status, a dimension value,
 * a list of ids of unknown length) can make every generic plan look dearer, and every execution of a page's
 * statement was planned again (1.5–2 ms of the database's time per request in a database of several
 * projects). For values whose plan is the same whatever they are (the same index read), so that one generic
 * plan serves them all.
 */
export const unseen = (
  value: string | ReadonlyArray<string>,
  type: "uuid" | "text" | "uuid[]" | "text[]",
): RawBuilder<string> =>
  // Cast again outside: `any((select …))` would read the sub-select as rows, not as one array.
  sql<string>`(select ${typeof value === "string" ? value : sql.val(value)}::${sql.raw(type)})::${sql.raw(type)}`
