import { KeyManagement } from "@dxs/services"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"

export const KeysHttp = HttpApiBuilder.group(Api, "keys", (handlers) =>
  Effect.gen(function* () {
    const keys = yield* KeyManagement
    return handlers
      .handle("list", () => keys.list())
      .handle("create", ({ payload }) => keys.create(payload.name))
      .handle("rotate", ({ path }) => keys.rotate(path.id))
      .handle("revoke", ({ path }) => keys.revoke(path.id))
  }),
)
