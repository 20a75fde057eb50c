import { problemType, readinessProbe } from "@dxs/services"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Effect, Layer } from "effect"

/**
 * Beyond the contract, for load balancers and orchestrators, without a key: `GET /healthz` answers 200
 * while the process runs; `GET /readyz` answers 200 when the database answers, its migrations are current
 * and object storage answers, else 503 problem+json naming the failing parts (`checks` says why).
 */
export const HealthLive = Layer.unwrapEffect(
  Effect.map(readinessProbe, (probe) =>
    HttpApiBuilder.Router.use((router) =>
      Effect.zipRight(
        router.get("/healthz", Effect.succeed(HttpServerResponse.unsafeJson({ status: "alive" }))),
        router.get(
          "/readyz",
          Effect.map(probe, ({ ready, checks, failing }) => {
            if (ready) return HttpServerResponse.unsafeJson({ status: "ready", checks })
            return HttpServerResponse.text(
              JSON.stringify({
                type: problemType("not-ready"),
                title: "Not ready",
                status: 503,
                detail: `Not ready: ${failing.map((part) => `${part} (${checks[part as keyof typeof checks]})`).join("; ")}`,
                failing,
                checks,
              }),
              { status: 503, contentType: "application/problem+json" },
            )
          }),
        ),
      ),
    ),
  ),
)
