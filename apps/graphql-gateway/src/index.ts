export * from "./Complexity.ts"
export * from "./Context.ts"
export { schema, schemaSdl } from "./Schema.ts"
export * from "./Server.ts"
