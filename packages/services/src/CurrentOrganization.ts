import { Context } from "effect"

/** The organisation a request acts for: resolved from its API key (or session) by the adapter. */
export class CurrentOrganization extends Context.Tag("@dxs/services/CurrentOrganization")<
  CurrentOrganization,
  { readonly id: string; readonly name: string }
>() {}
