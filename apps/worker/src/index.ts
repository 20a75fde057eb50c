export * from "./Registry.ts"
export * from "./Worker.ts"
