import { Context } from "effect"

/** The organisation a request acts for: resolved from its API key (or session) by the adapter. */
export class CurrentOrganization extends Context.Tag("@dxs/services/CurrentOrganization")<
  CurrentOrganization,
  {
    readonly id: string
    readonly name: string
    /** The signed-in member when the request came with a session (not an API key). */
    readonly member?: { readonly id: string; readonly email: string } | undefined
  }
>() {}
