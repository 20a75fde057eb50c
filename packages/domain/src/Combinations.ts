/**
 * Combinations of dimension instances: an agent with several dimensions has one atomic value per
 * combination of one instance of each dimension.
 */

/**
 * Every way to take one element from each list, in order: the first list varies slowest. No lists give one
 * empty combination; any empty list gives none.
 */
export const cartesian = <T>(lists: ReadonlyArray<ReadonlyArray<T>>): Array<Array<T>> => {
  let combinations: Array<Array<T>> = [[]]
  for (const list of lists) {
    const next: Array<Array<T>> = []
    for (const prefix of combinations) {
      for (const element of list) next.push([...prefix, element])
    }
    combinations = next
    if (combinations.length === 0) break
  }
  return combinations
}

/**
 * The key of one combination of dimension instances: the JSON array of their ids. The ids must be given in
 * the agent's dimension display order, so one combination always has one key; no instances (an agent
 * without dimensions) give `[]`.
 */
export const dimensionKey = (instanceIds: ReadonlyArray<string>): string => JSON.stringify(instanceIds)
