/**
 * The spec's records and request bodies (api-v1.md, "Resources and their fields"), exactly as they go on the
 * wire: one contract per resource in `contract/`, used by the REST API, the GraphQL gateway and the web app.
 */
export * from "./contract/Agent.ts"
export * from "./contract/Dimension.ts"
export * from "./contract/Document.ts"
export { IsoDate, isEmail, JsonObject, JsonObjectOrNull } from "./contract/Fields.ts"
export * from "./contract/Folder.ts"
export * from "./contract/Key.ts"
export * from "./contract/Member.ts"
export * from "./contract/OutputSchema.ts"
export * from "./contract/Project.ts"
export * from "./contract/Result.ts"
export * from "./contract/Webhook.ts"
