/**
 * The budget of one extraction request (`LLM_MAX_AGENTS_PER_REQUEST`, `LLM_CONTEXT_TOKENS`): read by the
 * extraction stage when it groups a document's agents and windows its pages, and by the launch preview when
 * it estimates the next launch's requests. The entry points set it from their configuration.
 */
import { type RequestBudget as Budget, defaultRequestBudget } from "@dxs/domain/ModelRequests"
import { Context } from "effect"

export class RequestBudget extends Context.Reference<RequestBudget>()("@dxs/pipeline/RequestBudget", {
  defaultValue: (): Budget => defaultRequestBudget,
}) {}
