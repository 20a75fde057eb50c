/**
 * The export condition under which every @dxs package resolves to its TypeScript sources (`src/*.ts`)
 * instead of its build (`dist/*.js`, what plain Node gets): vitest, tsx and TypeScript use it, so tests
 * and development never need a build. Processes that tests start are given `sourceConditionFlag`.
 */
export const SOURCE_CONDITION = "@dxs/source"

/** The Node (and tsx) flag that resolves the workspace's packages to their sources. */
export const sourceConditionFlag = `--conditions=${SOURCE_CONDITION}`
