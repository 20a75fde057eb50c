export * from "./BlobReferences.ts"
export * from "./BlobStore.ts"
// The S3 blob store is imported from "@dxs/db/S3BlobStore" only where it is used: the AWS SDK is loaded
// by processes with BLOB_STORE=s3 alone.
export * from "./Db.ts"
export * from "./Embedded.ts"
export * from "./Idempotency.ts"
export * from "./Listen.ts"
export * from "./Migrations.ts"
export * from "./Outage.ts"
export * from "./ProgressChannel.ts"
export type * from "./Schema.ts"
