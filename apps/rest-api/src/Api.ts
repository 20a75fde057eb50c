import * as HttpApi from "@effect/platform/HttpApi"
import * as OpenApi from "@effect/platform/OpenApi"
import { AgentsApi } from "./agents/Api.ts"
import { AuthApi } from "./auth/Api.ts"
import { DimensionsApi } from "./dimensions/Api.ts"
import { DocumentsApi, FilesApi } from "./documents/Api.ts"
import { FileEditApi } from "./fileedit/Api.ts"
import { FoldersApi } from "./folders/Api.ts"
import { KeysApi } from "./keys/Api.ts"
import { MetaApi } from "./meta/Api.ts"
import { problemsInOpenApi } from "./OpenApiProblems.ts"
import { ProjectsApi } from "./projects/Api.ts"
import { ResultsApi } from "./results/Api.ts"
import { RunsApi } from "./runs/Api.ts"
import { OutputSchemaApi } from "./schema/Api.ts"
import { WebhooksApi } from "./webhooks/Api.ts"

/** The REST contract (api-v1.md): every group, under /api/v1. */
export class Api extends HttpApi.make("dxs")
  .add(MetaApi)
  .add(AuthApi)
  .add(KeysApi)
  .add(ProjectsApi)
  .add(FoldersApi)
  .add(AgentsApi)
  .add(RunsApi)
  .add(DimensionsApi)
  .add(DocumentsApi)
  .add(FilesApi)
  .add(ResultsApi)
  .add(OutputSchemaApi)
  .add(FileEditApi)
  .add(WebhooksApi)
  .prefix("/api/v1")
  .annotate(OpenApi.Title, "dxs — document extraction service")
  .annotate(OpenApi.Version, "1")
  // The server's own origin: the paths above already carry /api/v1, and one description serves every
  // deployment (any host, port or scheme), so the URL is relative — "/" against wherever the
  // description was fetched from.
  .annotate(OpenApi.Servers, [
    { url: "/", description: "this server (the origin this description is served from)" },
  ])
  .annotate(OpenApi.Transform, problemsInOpenApi)
  .annotate(
    OpenApi.Description,
    "Upload documents, define agents (one value to extract each), launch the pipeline and read resolved values with citations. Every request needs the X-API-Key header except this description and the docs page; without valid credentials an operation that needs them answers 401 before anything else of the request is read. Errors are RFC 9457 application/problem+json; 503 with Retry-After when object storage or the database cannot be reached. Bodies (JSON, form or multipart) may carry only the members their schema declares: any other member is refused with 400 naming it. In a form or multipart body an empty value means null where the field takes null (a form has no other way to say it); in JSON, null is null and an empty string is a string. No string (in a body, a query, a path or a file name) may contain a NUL character or a lone surrogate. A method a path does not have answers 405 with an Allow header. Beyond the contract, outside /api/v1 and without a key: GET /healthz answers 200 while the process runs (liveness), GET /readyz answers 200 with `checks` when the database answers, its migrations are current and object storage answers, else 503 problem+json whose `failing` names the parts (readiness).",
  ) {}
