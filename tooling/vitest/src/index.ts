export { testConfig } from "./config.ts"
