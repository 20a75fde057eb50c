/**
 * What the request log line says of a request beyond its method, route and status: the organisation it
 * acted for, once authentication has decided it. Kept per underlying Node request (the router may hand
 * handlers a modified copy of the Effect request).
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"

const organizations = new WeakMap<object, string>()

const keyOf = (request: HttpServerRequest.HttpServerRequest): object =>
  (NodeHttpServerRequest.toIncomingMessage(request) as object | undefined) ?? request

export const noteOrganization = (request: HttpServerRequest.HttpServerRequest, organizationId: string) => {
  organizations.set(keyOf(request), organizationId)
}

export const organizationOf = (request: HttpServerRequest.HttpServerRequest): string | undefined =>
  organizations.get(keyOf(request))
