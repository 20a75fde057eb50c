export * from "./parsing/Backend.ts"
export * from "./parsing/ParseDocument.ts"
export * from "./parsing/Registry.ts"
export * from "./parsing/Runner.ts"
