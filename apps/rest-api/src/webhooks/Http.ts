import { Webhooks } from "@dxs/services"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Effect } from "effect"
import { Api } from "../Api.ts"

export const WebhooksHttp = HttpApiBuilder.group(Api, "webhooks", (handlers) =>
  Effect.gen(function* () {
    const webhooks = yield* Webhooks
    return handlers
      .handle("list", () => webhooks.list())
      .handle("events", () => webhooks.events())
      .handle("create", ({ payload }) => webhooks.create(payload))
      .handle("get", ({ path }) => webhooks.get(path.id))
      .handle("patch", ({ path, payload }) => webhooks.update(path.id, payload))
      .handle("delete", ({ path }) => webhooks.remove(path.id))
      .handle("test", ({ path }) => webhooks.test(path.id))
      .handle("deliveries", ({ path, urlParams }) => webhooks.deliveries(path.id, urlParams))
      .handle("rotateSecret", ({ path }) => webhooks.rotateSecret(path.id))
  }),
)
