/** What the result editor sends, read with the same rules as the server (`@dxs/domain/Values`). */
import type { AgentValueType } from "@dxs/domain/Enums"
import { parseNumber } from "@dxs/domain/Values"

/**
 * The value to send for a result set by hand: null for an empty field, a number for a `number` agent when
 * the text reads as one (`1.234,56`, `1,234.56`, `€ 3,000`), else the text as typed.
 */
export const overrideValue = (text: string, valueType: AgentValueType): string | number | null => {
  if (text.trim() === "") return null
  if (valueType === "number") {
    const n = parseNumber(text)
    if (n !== undefined) return n
  }
  return text
}

/** At or below this, a confidence is shown as low (a value to look at first). */
export const LOW_CONFIDENCE = 0.5

/** A confidence (0 to 1) as a whole percentage, `82%`; null when there is none. */
export const confidenceText = (confidence: number | null | undefined): string | null =>
  confidence === null || confidence === undefined ? null : `${Math.round(confidence * 100)}%`

export const isLowConfidence = (confidence: number | null | undefined): boolean =>
  confidence !== null && confidence !== undefined && confidence <= LOW_CONFIDENCE
