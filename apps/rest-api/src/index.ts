export * from "./Api.ts"
export { openApiDocument } from "./meta/Http.ts"
export * from "./Server.ts"
