export * from "./Db.ts"
export * from "./Embedded.ts"
export * from "./Migrations.ts"
export type * from "./Schema.ts"
