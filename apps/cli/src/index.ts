export * from "./Config.ts"
