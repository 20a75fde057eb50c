import { RunChangesPage, RunsPage } from "@dxs/domain/contract/Run"
import { RUN_CHANGES_MAX_LIMIT, RUNS_MAX_LIMIT } from "@dxs/services"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Schema } from "effect"
import { Authentication } from "../Auth.ts"
import { BadRequest, cursorParam, NotFound, Uuid, wholeNumber } from "../Common.ts"

const RunsParams = Schema.Struct({
  limit: Schema.optional(
    wholeNumber(1, RUNS_MAX_LIMIT).annotations({
      description: `page size, default 20, at most ${RUNS_MAX_LIMIT}`,
    }),
  ),
  offset: Schema.optional(wholeNumber(0).annotations({ description: "rows to skip, default 0" })),
  cursor: Schema.optional(cursorParam),
})

const ChangesParams = Schema.Struct({
  limit: Schema.optional(
    wholeNumber(1, RUN_CHANGES_MAX_LIMIT).annotations({
      description: `page size, default 50, at most ${RUN_CHANGES_MAX_LIMIT}`,
    }),
  ),
  offset: Schema.optional(wholeNumber(0).annotations({ description: "rows to skip, default 0" })),
})

export class RunsApi extends HttpApiGroup.make("runs")
  .add(
    HttpApiEndpoint.get("list", "/projects/:project_id/runs/")
      .setPath(Schema.Struct({ project_id: Uuid }))
      .setUrlParams(RunsParams)
      .addSuccess(RunsPage)
      .annotate(
        OpenApi.Summary,
        "Beyond the contract: the project's runs, newest first, each with its extraction pairs, the agents it processed and the model usage its tasks recorded (requests, cache hits, input, cached input and output tokens)",
      ),
  )
  .add(
    HttpApiEndpoint.get("changes", "/projects/:project_id/runs/:run_number/changes/")
      .setPath(Schema.Struct({ project_id: Uuid, run_number: wholeNumber(1) }))
      .setUrlParams(ChangesParams)
      .addSuccess(RunChangesPage)
      .annotate(
        OpenApi.Summary,
        "Beyond the contract: what a run changed, the values that differ from the values before it for the same agent and combination of dimension values, each side with its status and citations",
      )
      .annotate(
        OpenApi.Description,
        "Ordered by agent (oldest first) and result name. A value set by hand is no change (the run keeps it). A run that resolves a combination twice (a retried task) reports it once, from the value before the run; one that ends where it started is no change. 404 for a run number the project does not have.",
      ),
  )
  .addError(BadRequest)
  .addError(NotFound)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Runs")
  .annotate(
    OpenApi.Description,
    "Each launch queues a run (or joins the queued one); a run goes through its stages and ends succeeded or failed. Usage is 0 with the local provider, which sends no model requests.",
  ) {}
