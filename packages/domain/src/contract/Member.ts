/** The web application's members and their sessions (api-v1.md "Sign-in"). */
import { Schema } from "effect"
import { Timestamp } from "./Fields.ts"

export const SignInRequest = Schema.Struct({
  email: Schema.String,
  password: Schema.String,
}).annotations({ identifier: "V1SignInRequest" })
export type SignInRequest = typeof SignInRequest.Type

export const Member = Schema.Struct({
  id: Schema.UUID,
  email: Schema.String,
  organization: Schema.Struct({ id: Schema.UUID, name: Schema.String }),
  created_at: Schema.String,
}).annotations({ identifier: "V1Member" })
export type Member = typeof Member.Type

export const Session = Schema.Struct({
  member: Member,
  csrf_token: Schema.String.annotations({ description: "send it in the X-CSRF-Token header of every write" }),
  expires_at: Timestamp,
}).annotations({ identifier: "V1Session" })
export type Session = typeof Session.Type
