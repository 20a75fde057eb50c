/**
 * Confidence, from 0 to 1: of one extraction (the model's own, its grounding) and of a resolved result
 * (its extractions' confidence, raised by agreement across documents and lowered by disagreement). The
 * README's "Confidence" section states the same formulas; keep them together.
 */

/** An extraction's confidence when it is grounded and its model gave none. */
export const DEFAULT_GROUNDED_CONFIDENCE = 0.75
/** The most an extraction whose passage or value is not grounded may have. */
export const UNGROUNDED_CEILING = 0.2
/** Each agreeing extraction beyond the first closes this share of the gap to 1. */
export const AGREEMENT_GAIN = 0.25
/** A result with every judged extraction disagreeing keeps (1 − this) of its confidence. */
export const DISAGREEMENT_PENALTY = 0.5
/** The most a result that requires attention may have. */
export const ATTENTION_CEILING = 0.5

const clamp = (x: number): number => (Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0)

const round = (x: number): number => Math.round(x * 1000) / 1000

/**
 * One extraction's confidence: the model's own (from its tokens' log-probabilities, or the local extractor's
 * score) when given, else `DEFAULT_GROUNDED_CONFIDENCE`; an ungrounded answer gets that times
 * `UNGROUNDED_CEILING`, so at most 0.2.
 */
export const extractionConfidence = (input: {
  readonly modelConfidence?: number | null | undefined
  readonly grounded: boolean
}): number => {
  const own =
    input.modelConfidence === null || input.modelConfidence === undefined
      ? DEFAULT_GROUNDED_CONFIDENCE
      : clamp(input.modelConfidence)
  return round(input.grounded ? own : own * UNGROUNDED_CEILING)
}

/**
 * The confidence of a model's answer from the log-probabilities of its tokens: the geometric mean of the
 * token probabilities (`exp` of the mean log-probability); undefined when there are none.
 */
export const confidenceFromLogprobs = (logprobs: ReadonlyArray<number>): number | undefined => {
  const finite = logprobs.filter((l) => Number.isFinite(l))
  if (finite.length === 0) return undefined
  return round(clamp(Math.exp(finite.reduce((a, b) => a + b, 0) / finite.length)))
}

/**
 * A resolved result's confidence from the extractions of its value (`consistent`: the consistency
 * verdict, null when not judged):
 *
 * - base: the mean confidence of the extractions not judged inconsistent (all of them when every one
 *   is), an unknown confidence counted as `DEFAULT_GROUNDED_CONFIDENCE`;
 * - agreement: with `a` extractions judged consistent, `1 − (1 − base) × (1 − AGREEMENT_GAIN)^(a − 1)`;
 * - disagreement: with `d` of the `a + d` judged extractions inconsistent, times
 *   `1 − DISAGREEMENT_PENALTY × d / (a + d)`;
 * - `Requires attention` caps it at `ATTENTION_CEILING`.
 *
 * Null when there is no value (`No result`, or no extraction).
 */
export const resultConfidence = (input: {
  readonly extractions: ReadonlyArray<{
    readonly confidence: number | null
    readonly consistent: boolean | null
  }>
  readonly status: string
}): number | null => {
  if (input.status === "No result" || input.extractions.length === 0) return null
  const of = (e: { readonly confidence: number | null }) =>
    e.confidence === null ? DEFAULT_GROUNDED_CONFIDENCE : clamp(e.confidence)
  const kept = input.extractions.filter((e) => e.consistent !== false)
  const basis = kept.length > 0 ? kept : input.extractions
  const base = basis.reduce((sum, e) => sum + of(e), 0) / basis.length
  const agreeing = input.extractions.filter((e) => e.consistent === true).length
  const disagreeing = input.extractions.filter((e) => e.consistent === false).length
  let confidence = agreeing > 1 ? 1 - (1 - base) * (1 - AGREEMENT_GAIN) ** (agreeing - 1) : base
  if (disagreeing > 0) confidence *= 1 - (DISAGREEMENT_PENALTY * disagreeing) / (agreeing + disagreeing)
  if (input.status === "Requires attention") confidence = Math.min(confidence, ATTENTION_CEILING)
  return round(clamp(confidence))
}
