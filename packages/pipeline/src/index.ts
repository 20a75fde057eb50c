export * from "./parsing/Backend.ts"
export * from "./parsing/Registry.ts"
