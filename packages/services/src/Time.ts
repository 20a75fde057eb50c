/** Timestamps go on the wire as ISO 8601 strings. */
export const iso = (d: Date | string): string =>
  typeof d === "string" ? new Date(d).toISOString() : d.toISOString()
export const isoOrNull = (d: Date | string | null | undefined): string | null => (d == null ? null : iso(d))
/** Today's date in UTC, YYYY-MM-DD. */
export const todayUtc = (now: Date = new Date()): string => now.toISOString().slice(0, 10)
