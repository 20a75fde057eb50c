/**
 * The one composition of the services, used by every entry point (the REST API, the GraphQL gateway and
 * `dxs start`): from the settings an entry point has to the layer of every service its adapters call, over
 * the database and blob store it names or hands in. The adapters pass the storage through without using
 * it, so its types reach them from here rather than from @dxs/db.
 *
 * The rule: `X.Default` needs only the storage (`Db`, `BlobStore`); it takes them, its settings and the
 * services it calls (its `dependencies`) when it is built, and each method provides the storage and the
 * settings so taken to the effect it returns (`Effect.provide` of a context built once). A method needs only
 * the request scope (`CurrentOrganization`, which the adapter provides per request), or nothing.
 */
import { BlobStore, type BlobStoreShape, Db, fileBlobStoreLayer } from "@dxs/db"
import type { RequestBudget as Budget } from "@dxs/domain/ModelRequests"
import { RequestBudget } from "@dxs/pipeline/llm/RequestBudget"
import type { WebhookSettings } from "@dxs/pipeline/webhooks/Settings"
import { type Clock, type Context, Effect, Layer } from "effect"
import { Agents } from "./Agents.ts"
import { ApiKeys } from "./ApiKeys.ts"
import { CredentialMemory } from "./CredentialMemory.ts"
import { Dimensions } from "./Dimensions.ts"
import { Documents, FileLinks, PublicUrl, UploadLimits } from "./Documents.ts"
import { FileEdit, FileEditLimits } from "./FileEdit.ts"
import { Folders } from "./Folders.ts"
import { RequestLimits } from "./HttpLimits.ts"
import { KeyManagement } from "./KeyManagement.ts"
import { Launches, ModelProvider } from "./Launches.ts"
import { SpoolSettings } from "./Leftovers.ts"
import { LiveSubscriptionSettings } from "./LiveSubscriptions.ts"
import { Members, PasswordHashing, SessionSettings } from "./Members.ts"
import { AppUrl, OutputSchemas } from "./OutputSchemas.ts"
import { Pages, ParsingSettings } from "./Pages.ts"
import { ProgressFeed } from "./ProgressFeed.ts"
import { Projects } from "./Projects.ts"
import { AuthThrottleSettings, RateLimitSettings } from "./RateLimits.ts"
import { Results } from "./Results.ts"
import { WebhookConfig, Webhooks } from "./Webhooks.ts"

/** Every service an adapter calls; they need the storage (and read the settings) below them. */
export const ServicesLive = Layer.mergeAll(
  ApiKeys.Default,
  Members.Default,
  KeyManagement.Default,
  Projects.Default,
  Folders.Default,
  Agents.Default,
  Dimensions.Default,
  Launches.Default,
  Results.Default,
  OutputSchemas.Default,
  Documents.Default,
  Pages.Default,
  Webhooks.Default,
  ProgressFeed.Default,
  FileEdit.Default,
)

/** The database handle and the blob store the services run over. */
export type Storage = Db | BlobStore
/** A database handle, as an entry point that already holds one hands it in. */
export type DatabaseLayer = Layer.Layer<Db>
export type { BlobStoreShape }

/** Every service an adapter calls: what a call needs besides the request scope (`CurrentOrganization`). */
export type Services = Layer.Layer.Success<typeof ServicesLive>

/**
 * What the composition holds: the services and the storage under them, which only the authentication
 * of a request (its rate limits, kept in the database) still reads.
 */
export type ServicesContext = Services | Storage

/** A setting known up front, or one read when the layer is built (a server's address, once it listens). */
export type Setting<A, R> = A | Effect.Effect<A, never, R>

/** What an entry point knows; each setting left unset keeps its service's default. */
export interface ServicesOptions<R = never> {
  /** The database: a pool of 5 connections on `dbUrl`, unless the handle `db` is given. */
  readonly dbUrl: string
  readonly db?: DatabaseLayer | undefined
  /** The files: the directory `blobDir`, unless the blob store `blobs` (an S3 bucket…) is given. */
  readonly blobDir: string
  readonly blobs?: BlobStoreShape | undefined
  /** Base of documents' `file_url` links (the REST API's public address). */
  readonly publicUrl?: Setting<string, R> | undefined
  /** Base of the web application's deep links in enriched schema results. */
  readonly appUrl?: Setting<string, R> | undefined
  /** The key of secrets at rest and whether webhooks may target loopback (unset: a key of this process). */
  readonly webhooks?: WebhookSettings | undefined
  /** Requests per minute per API key or member. */
  readonly rateLimitPerMinute?: number | undefined
  /** How long a key or session found live is believed without reading it again (default 1 s; 0: never). */
  readonly credentialMemoryMs?: number | undefined
  /** Throttles against guessing credentials. */
  readonly authThrottle?: AuthThrottleSettings["Type"] | undefined
  /** Live subscriptions per API key or member in this process. */
  readonly maxSubscriptionsPerKey?: number | undefined
  /** Largest upload, in bytes. */
  readonly uploadMaxBytes?: number | undefined
  /** Largest file-edit template, in bytes. */
  readonly fileEditMaxBytes?: number | undefined
  /** How long a member's session lasts. */
  readonly sessionTtlSeconds?: number | undefined
  /** scrypt's cost of new password hashes (default `PASSWORD_HASH_COST`; only tests lower it). */
  readonly passwordHashCost?: number | undefined
  /** Body size and nesting limits of REST requests. */
  readonly requestLimits?: RequestLimits["Type"] | undefined
  /** How long a signed `file_url` link is valid. */
  readonly fileUrlTtlSeconds?: number | undefined
  /** Parse limits and the parsing threads (page images). */
  readonly parsing?: ParsingSettings["Type"] | undefined
  /** Where uploads are spooled while read. */
  readonly spoolRoot?: string | undefined
  /** The language model provider of the workers (LLM_PROVIDER), as the launch preview reports it. */
  readonly llmProvider?: "local" | "openai" | undefined
  /** The budget of one extraction request (LLM_MAX_AGENTS_PER_REQUEST, LLM_CONTEXT_TOKENS). */
  readonly requestBudget?: Budget | undefined
  /** The clock of rate windows and link expiry (default: Effect's, the system's); tests move their own. */
  readonly clock?: Clock.Clock | undefined
}

const settingValue = <A, R>(value: Setting<A, R>): Effect.Effect<A, never, R> =>
  Effect.isEffect(value) ? (value as Effect.Effect<A, never, R>) : Effect.succeed(value as A)

/** The reference `tag` set to `value` (as `as` shapes it), or left to its default when unset. */
const setting = <I, S, A, R>(
  tag: Context.Tag<I, S>,
  value: Setting<A, R> | undefined,
  as: (a: A) => S,
): Layer.Layer<never, never, R> =>
  value === undefined ? Layer.empty : Layer.effect(tag, Effect.map(settingValue(value), as))

/** What the settings given as effects need when the layer is built. */
export type SettingsRequirements<O> =
  | (O extends { readonly publicUrl?: infer S } ? RequirementsOf<S> : never)
  | (O extends { readonly appUrl?: infer S } ? RequirementsOf<S> : never)
type RequirementsOf<S> = S extends Effect.Effect<unknown, never, infer R> ? R : never

/** The settings that were given, as the references the services read. */
export const settingsLayer = <O extends ServicesOptions<any>>(
  options: O,
): Layer.Layer<never, never, SettingsRequirements<O>> =>
  Layer.mergeAll(
    setting(PublicUrl, options.publicUrl, (url) => url),
    setting(AppUrl, options.appUrl, (url) => url),
    setting(WebhookConfig, options.webhooks, (webhooks) => webhooks),
    setting(RateLimitSettings, options.rateLimitPerMinute, (perMinute) => ({ perMinute })),
    setting(CredentialMemory, options.credentialMemoryMs, (ttlMs) => ({ ttlMs })),
    setting(AuthThrottleSettings, options.authThrottle, (throttle) => throttle),
    setting(LiveSubscriptionSettings, options.maxSubscriptionsPerKey, (maxPerSubject) => ({ maxPerSubject })),
    setting(UploadLimits, options.uploadMaxBytes, (maxFileBytes) => ({ maxFileBytes })),
    setting(FileEditLimits, options.fileEditMaxBytes, (maxTemplateBytes) => ({ maxTemplateBytes })),
    setting(SessionSettings, options.sessionTtlSeconds, (ttlSeconds) => ({ ttlSeconds })),
    setting(PasswordHashing, options.passwordHashCost, (cost) => ({ cost })),
    setting(RequestLimits, options.requestLimits, (limits) => limits),
    setting(FileLinks, options.fileUrlTtlSeconds, (ttlSeconds) => ({ ttlSeconds })),
    setting(ParsingSettings, options.parsing, (parsing) => parsing),
    setting(SpoolSettings, options.spoolRoot, (root) => ({ root })),
    setting(ModelProvider, options.llmProvider, (provider) => ({ provider })),
    setting(RequestBudget, options.requestBudget, (budget) => budget),
    options.clock === undefined ? Layer.empty : Layer.setClock(options.clock),
  )

/** The database and the blob store the options name. */
export const storageLayer = (options: ServicesOptions<unknown>): Layer.Layer<Storage> =>
  Layer.merge(
    options.db ?? Db.layer(options.dbUrl, 5),
    options.blobs === undefined
      ? fileBlobStoreLayer(options.blobDir)
      : Layer.succeed(BlobStore, options.blobs),
  )

/** Every service, with the settings and the storage they run over (all of them in its output as well). */
export const servicesLayer = <O extends ServicesOptions<any>>(
  options: O,
): Layer.Layer<ServicesContext, never, SettingsRequirements<O>> =>
  ServicesLive.pipe(Layer.provideMerge(settingsLayer(options)), Layer.provideMerge(storageLayer(options)))
