/** The organisation's API keys, as the developer page manages them (api-v1.md "API keys"). */
import { Schema } from "effect"
import { Timestamp, Uuid } from "./Fields.ts"

const apiKeyFields = {
  id: Uuid,
  name: Schema.String,
  prefix: Schema.String.annotations({ description: "`dxs_live_` and the key's next four characters" }),
  created_at: Timestamp,
  last_used_at: Schema.NullOr(Timestamp),
  revoked_at: Schema.NullOr(Timestamp),
}

export const ApiKey = Schema.Struct(apiKeyFields).annotations({ identifier: "V1ApiKey" })
export type ApiKey = typeof ApiKey.Type

export const NewApiKey = Schema.Struct({
  ...apiKeyFields,
  key: Schema.String.annotations({ description: "the key itself: shown this once, never again" }),
}).annotations({ identifier: "V1NewApiKey" })
export type NewApiKey = typeof NewApiKey.Type

export const KeyCreateRequest = Schema.Struct({
  name: Schema.optionalWith(Schema.String, { default: () => "" }).annotations({
    description: "a label, e.g. where the key is used",
  }),
}).annotations({ identifier: "V1ApiKeyCreate" })
export type KeyCreateRequest = typeof KeyCreateRequest.Type
