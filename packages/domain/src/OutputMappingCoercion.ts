/**
 * The coercion of resolved values (text) into the JSON values a schema position accepts, for the rendering
 * of an output mapping (see OutputMapping.ts). Pure.
 */
import { enumOf, type JsonType, schemaTypes } from "./JsonSchema.ts"
import type { MappingAgent } from "./OutputMapping.ts"
import { parseNumber } from "./Values.ts"

const TRUE_WORDS = ["yes", "true", "y", "1", "x", "checked"]
const FALSE_WORDS = ["no", "false", "n", "0", "none", "unchecked"]

const PREFERRED: Readonly<Record<MappingAgent["value_type"], ReadonlyArray<JsonType>>> = {
  string: ["string"],
  number: ["number", "integer"],
  bool: ["boolean"],
  date: ["string"],
  datetime: ["string"],
}

/**
 * The values a resolved value (text) can become at a schema `position` (a schema inside `root`), best first:
 * the types the position allows, the one matching `valueType` first (number → number/integer, bool → boolean,
 * else string), then string, number, integer, boolean. Numbers go through `parseNumber` (integers must be
 * integral); booleans accept yes/true/y/1/x/checked and no/false/n/0/none/unchecked (case-insensitive,
 * trimmed). With an `enum`/`const`, a value must be one of the values; strings match case-insensitively after
 * trimming and take the enum's spelling. An untyped position takes the text as is (numbers parsed for number
 * agents, booleans for bool agents, when they parse). Empty when nothing fits. Other keywords (`pattern`,
 * `minimum`, `format`, …) are left to the caller's `PositionCheck`.
 */
export const leafCandidates = (
  value: string,
  root: unknown,
  position: unknown,
  valueType: MappingAgent["value_type"],
): Array<unknown> => {
  const allowed = schemaTypes(root, position)
  const candidates = [
    ...PREFERRED[valueType],
    "string",
    "number",
    "integer",
    "boolean",
  ] as ReadonlyArray<JsonType>
  const order = [...new Set(candidates)].filter((t) =>
    allowed.length === 0 ? t !== "integer" : allowed.includes(t),
  )
  const allowedValues = enumOf(root, position)
  const text = value.trim()
  const out: Array<unknown> = []
  for (const type of order) {
    let converted: unknown
    if (type === "string") converted = value
    else if (type === "boolean") {
      const word = text.toLowerCase()
      converted = TRUE_WORDS.includes(word) ? true : FALSE_WORDS.includes(word) ? false : undefined
    } else {
      const n = parseNumber(text)
      converted = n === undefined || (type === "integer" && !Number.isInteger(n)) ? undefined : n
    }
    if (converted === undefined) continue
    const match =
      allowedValues === undefined
        ? converted
        : allowedValues.find(
            (v) =>
              v === converted ||
              (typeof v === "string" &&
                typeof converted === "string" &&
                v.trim().toLowerCase() === text.toLowerCase()),
          )
    if (match !== undefined && !out.includes(match)) out.push(match)
  }
  return out
}

/** The first of `leafCandidates`, or `{ ok: false }` when nothing fits. */
export const convertLeaf = (
  value: string,
  root: unknown,
  position: unknown,
  valueType: MappingAgent["value_type"],
): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  const candidates = leafCandidates(value, root, position, valueType)
  return candidates.length > 0 ? { ok: true, value: candidates[0] } : { ok: false }
}

/** The text that stands for "nothing found" when an agent's `value_if_not_found` is empty. */
export const NOT_FOUND_TEXT = "n/a"
