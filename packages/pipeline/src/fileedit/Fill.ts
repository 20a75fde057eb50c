/** What filling a template gives, how it reports progress, and how it refuses a template. */
import type { PlaceholderProblem } from "@dxs/domain/FileEdit"
import { Data, type Effect } from "effect"

export interface FillOutcome {
  readonly bytes: Uint8Array
  readonly problems: ReadonlyArray<PlaceholderProblem>
}

/** Called as the filling goes: placeholders and table rows done out of `total`; its failure stops the filling. */
export type Progress<E> = (completed: number, total: number) => Effect.Effect<void, E>

/** A template that cannot be filled at all (beyond a bound, malformed placeholders): the job fails with this. */
export class FillRefused extends Data.TaggedError("FillRefused")<{ readonly message: string }> {}
