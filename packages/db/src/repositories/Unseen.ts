import { type RawBuilder, sql } from "kysely"

/**
 * A value behind a sub-select, where PostgreSQL's planner cannot read it. A prepared statement is planned
 * for its values five times, then kept as one generic plan unless the values' own plans look cheaper: a
 * value the planner has statistics for (a project's share of the results, a rare status) can make every
 * generic plan look dearer, and every execution of a page's statement was planned again (1.5 ms of the
 * database's time per request in a database of several projects). For values whose plan is the same
 * whatever they are (the same index read), so that one generic plan serves every value.
 */
export const unseen = (value: string, type: "uuid" | "text"): RawBuilder<string> =>
  sql<string>`(select ${value}::${sql.raw(type)})`
