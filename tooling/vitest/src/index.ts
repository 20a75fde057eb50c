export { SOURCE_CONDITION, sourceConditionFlag } from "./conditions.ts"
export { testConfig } from "./config.ts"
