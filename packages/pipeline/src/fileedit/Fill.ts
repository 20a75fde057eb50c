/** What filling a template gives, and how it reports progress. */
import type { PlaceholderProblem } from "@dxs/domain/FileEdit"

export interface FillOutcome {
  readonly bytes: Uint8Array
  readonly problems: ReadonlyArray<PlaceholderProblem>
}

/** Called as the filling goes: placeholders and table rows done out of `total`. */
export type Progress = (completed: number, total: number) => Promise<void>

/** A template that cannot be filled at all (beyond a bound, malformed placeholders): the job fails with this. */
export class FillRefused extends Error {
  override readonly name = "FillRefused"
}
