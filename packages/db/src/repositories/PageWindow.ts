/** The window of a page of rows, as the page reads write it. */
import { sql } from "kysely"

/**
 * `limit n [offset k]`, the limit written into the statement (a checked whole number; the offset stays a
 * parameter): PostgreSQL then plans a page's statement once per connection (a generic plan), where an unknown
 * limit would make it plan anew for every execution. The first page has no offset at all.
 */
export const pageWindow = (limit: number, offset: number) =>
  offset > 0
    ? sql`limit ${sql.lit(Math.floor(limit))} offset ${offset}`
    : sql`limit ${sql.lit(Math.floor(limit))}`
