/** Folders of projects (api-v1.md "Folders"). */
import { Schema } from "effect"
import { DateTime, NameInput, RecordId, Uuid } from "./Fields.ts"

export const Folder = Schema.Struct({
  id: RecordId,
  name: Schema.String,
  parent_id: Schema.NullOr(RecordId),
  created_at: DateTime,
  updated_at: DateTime,
}).annotations({ identifier: "V1Folder" })
export type Folder = typeof Folder.Type

const FolderName = NameInput("the folder's name")

export const FolderCreate = Schema.Struct({
  name: FolderName,
  parent_id: Schema.optional(Schema.NullOr(Uuid)),
}).annotations({ identifier: "V1FolderCreate" })
export type FolderCreate = typeof FolderCreate.Type

export const FolderPatch = Schema.Struct({
  name: Schema.optional(FolderName),
  parent_id: Schema.optional(Schema.NullOr(Uuid)),
}).annotations({ identifier: "V1FolderPatch" })
export type FolderPatch = typeof FolderPatch.Type
