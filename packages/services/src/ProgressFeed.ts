/**
 * A project's progress as it changes, for live views (GraphQL's `runProgress`; REST or the web
 * application could serve it the same way): the project status record and the agents/status record,
 * first as they are, then after every change.
 *
 * Driven by PostgreSQL notifications, not by polling: the database announces on `dxs_progress` every
 * committed change that can move a project's progress (see `@dxs/db/ProgressChannel`), and this process
 * listens with one connection, opened with its first subscriber and closed with its last (or at
 * shutdown). The subscribers of one project (in one organisation) share its reads: one read per change,
 * a burst of changes read at most once per `minReadIntervalMs`, and only a state different from the last
 * is pushed. A read every `safetyReadIntervalMs` covers a notification that never came, and every project
 * is read again once the listening connection is back after a loss.
 */
import { Db, listenForProgress } from "@dxs/db"
import type { ProjectStatus } from "@dxs/domain/Records"
import { Cause, Context, Effect, Exit, Fiber, Option, Queue, type Scope, Stream, Take } from "effect"
import { CurrentOrganization } from "./CurrentOrganization.ts"
import type { NotFound, TooManySubscriptions } from "./Errors.ts"
import { type AgentsStatus, Launches } from "./Launches.ts"
import { LiveSubscriptions } from "./LiveSubscriptions.ts"
import { Projects } from "./Projects.ts"

/** One moment of a project's progress: what GET …/status/ and GET …/agents/status/ answer. */
export interface ProjectProgress {
  readonly status: ProjectStatus
  readonly agents: AgentsStatus
}

export class ProgressFeedSettings extends Context.Reference<ProgressFeedSettings>()(
  "@dxs/services/ProgressFeedSettings",
  {
    defaultValue: (): {
      /** Least time between two reads of one project (a burst of changes is read once). */
      readonly minReadIntervalMs: number
      /** A project with subscribers is read at least this often, notified or not. */
      readonly safetyReadIntervalMs: number
    } => ({ minReadIntervalMs: 250, safetyReadIntervalMs: 30_000 }),
  },
) {}

type Message = Take.Take<ProjectProgress, NotFound>

/** The shared reading of one project of one organisation, while it has subscribers. */
interface Hub {
  readonly projectId: string
  readonly organization: CurrentOrganization["Type"]
  /** Each subscriber's mailbox; it keeps only the newest message, so a slow reader skips to the latest state. */
  readonly subscribers: Set<Queue.Queue<Message>>
  /** Set by a notification (or a reconnection): read again. */
  readonly wake: Queue.Queue<true>
  latest: { readonly value: ProjectProgress; readonly json: string } | undefined
  fiber: Fiber.RuntimeFiber<void> | undefined
  ended: boolean
}

/** The feed of this process: its hubs, the listening connection, and what reads a project's progress. */
interface Feed {
  /** The database the listening connection is opened to. */
  readonly url: string
  readonly hubs: Map<string, Hub>
  readonly byProject: Map<string, Set<Hub>>
  /** One read of a hub's project, on behalf of its organisation. */
  readonly read: (hub: Hub) => Effect.Effect<ProjectProgress, NotFound>
  readonly settings: ProgressFeedSettings["Type"]
  /** The feed's scope: hubs' readings run in it. */
  readonly scope: Scope.Scope
  closed: boolean
  /** The listening connection: started by the first hub, stopped with the last. */
  listening: Promise<() => Promise<void>> | undefined
  /** Every stop of a listener, awaited at shutdown. */
  stopped: Promise<unknown>
}

const wake = (hub: Hub) => Queue.unsafeOffer(hub.wake, true)

const startListening = (feed: Feed) => {
  const started = listenForProgress(
    feed.url,
    (projectId) => {
      for (const hub of feed.byProject.get(projectId) ?? []) wake(hub)
    },
    () => {
      for (const hub of feed.hubs.values()) wake(hub)
    },
  )
  feed.listening = started
  started.catch(() => {
    if (feed.listening === started) feed.listening = undefined
  })
  return started
}

const stopListening = (feed: Feed) => {
  const stopping = feed.listening
  feed.listening = undefined
  if (stopping)
    feed.stopped = Promise.all([
      feed.stopped,
      stopping.then(
        (stop) => stop(),
        () => undefined,
      ),
    ])
}

const forget = (feed: Feed, hub: Hub) => {
  hub.ended = true
  const key = `${hub.organization.id}:${hub.projectId}`
  if (feed.hubs.get(key) === hub) feed.hubs.delete(key)
  const same = feed.byProject.get(hub.projectId)
  same?.delete(hub)
  if (same?.size === 0) feed.byProject.delete(hub.projectId)
  if (feed.hubs.size === 0) stopListening(feed)
}

/** Ends every subscriber of the hub with `message` (the end, or the failure that ends them). */
const end = (feed: Feed, hub: Hub, message: Message) => {
  forget(feed, hub)
  for (const s of hub.subscribers) Queue.unsafeOffer(s, message)
}

const publish = (hub: Hub, value: ProjectProgress) => {
  const json = JSON.stringify(value)
  if (hub.latest?.json === json) return
  hub.latest = { value, json }
  for (const s of hub.subscribers) Queue.unsafeOffer(s, Take.of(value))
}

/** Reads the hub's project whenever it is woken (at most once per `minReadIntervalMs`), until it ends. */
const reading = (feed: Feed, hub: Hub): Effect.Effect<void> =>
  Effect.gen(function* () {
    const { settings } = feed
    for (;;) {
      // Changes committed before this read are in it; one notified during it makes another read.
      yield* Queue.takeAll(hub.wake)
      const exit = yield* Effect.exit(feed.read(hub))
      if (Exit.isSuccess(exit)) publish(hub, exit.value)
      else if (Cause.isInterruptedOnly(exit.cause)) return
      else if (hub.latest === undefined || Option.isSome(Cause.failureOption(exit.cause))) {
        // No state yet to stand by, or the project is gone (NotFound): its subscribers end with that.
        return end(feed, hub, Take.failCause(exit.cause))
      } else {
        yield* Effect.logWarning(
          `reading the progress of project ${hub.projectId} failed; it is read again at the next change`,
          exit.cause,
        )
      }
      yield* Effect.sleep(settings.minReadIntervalMs)
      yield* Effect.timeoutOption(Queue.take(hub.wake), settings.safetyReadIntervalMs)
    }
  })

/**
 * Adds the mailbox to the project's hub (made, and its reading started, if new) until the scope
 * closes. Only the wait for the listening connection can be interrupted: a registration always comes
 * with its removal.
 */
const join = (
  feed: Feed,
  organization: CurrentOrganization["Type"],
  projectId: string,
  mailbox: Queue.Queue<Message>,
) =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function* () {
      const key = `${organization.id}:${projectId}`
      for (;;) {
        if (feed.closed) {
          Queue.unsafeOffer(mailbox, Take.end)
          return
        }
        const existing = feed.hubs.get(key)
        if (existing) {
          existing.subscribers.add(mailbox)
          if (existing.latest) Queue.unsafeOffer(mailbox, Take.of(existing.latest.value))
          yield* Effect.addFinalizer(() => leave(feed, existing, mailbox))
          return
        }
        // Listening before the first read, so that no change falls between the two.
        const started = feed.listening ?? startListening(feed)
        yield* restore(Effect.promise(() => started)).pipe(
          // A subscriber gone before its hub was made leaves no listener behind.
          Effect.onInterrupt(() =>
            Effect.sync(() => {
              if (feed.hubs.size === 0 && feed.listening === started) stopListening(feed)
            }),
          ),
        )
        // Meanwhile the listener may have stopped (its last hub left) or the hub been made: look again.
        if (feed.listening !== started || feed.hubs.has(key) || feed.closed) continue
        const hub: Hub = {
          projectId,
          organization,
          subscribers: new Set([mailbox]),
          wake: yield* Queue.sliding<true>(1),
          latest: undefined,
          fiber: undefined,
          ended: false,
        }
        feed.hubs.set(key, hub)
        feed.byProject.set(projectId, (feed.byProject.get(projectId) ?? new Set()).add(hub))
        // (A fiber forked here would inherit the uninterruptible region; its reading must stay stoppable.)
        hub.fiber = yield* Effect.forkIn(Effect.interruptible(reading(feed, hub)), feed.scope)
        yield* Effect.addFinalizer(() => leave(feed, hub, mailbox))
        return
      }
    }),
  )

const leave = (feed: Feed, hub: Hub, mailbox: Queue.Queue<Message>) =>
  Effect.suspend(() => {
    hub.subscribers.delete(mailbox)
    if (hub.subscribers.size > 0 || hub.ended) return Effect.void
    forget(feed, hub)
    return hub.fiber === undefined ? Effect.void : Fiber.interruptFork(hub.fiber)
  })

/** Ends every hub's subscribers and reading, and stops listening (every stop awaited). */
const close = (feed: Feed) =>
  Effect.gen(function* () {
    feed.closed = true
    const open = [...feed.hubs.values()]
    for (const hub of open) end(feed, hub, Take.end)
    yield* Fiber.interruptAll(open.flatMap((h) => (h.fiber === undefined ? [] : [h.fiber])))
    stopListening(feed)
    yield* Effect.promise(() => feed.stopped)
  })

export class ProgressFeed extends Effect.Service<ProgressFeed>()("@dxs/services/ProgressFeed", {
  scoped: Effect.gen(function* () {
    const { url } = yield* Db
    const projects = yield* Projects
    const launches = yield* Launches
    const places = yield* LiveSubscriptions
    const scope = yield* Effect.scope
    const settings = yield* ProgressFeedSettings
    const feed: Feed = {
      url,
      hubs: new Map(),
      byProject: new Map(),
      read: (hub) =>
        Effect.all(
          {
            status: projects.status(hub.projectId),
            agents: launches.status(hub.projectId),
          },
          { concurrency: 2 },
        ).pipe(Effect.provideService(CurrentOrganization, hub.organization)),
      settings,
      scope,
      closed: false,
      listening: undefined,
      stopped: Promise.resolve(),
    }
    const closing = close(feed)
    yield* Effect.addFinalizer(() => closing)

    return {
      /**
       * The project's progress: its state now, then each different state, until the stream is no longer
       * read (or the feed shuts down: it ends). Holds one of `subscriber`'s live-subscription places
       * meanwhile (TooManySubscriptions when none is left). A project not of the current organisation
       * (or none) fails with NotFound, as does one deleted meanwhile.
       */
      subscribe: (
        projectId: string,
        subscriber: string,
      ): Stream.Stream<ProjectProgress, NotFound | TooManySubscriptions, CurrentOrganization> =>
        Stream.unwrapScoped(
          Effect.gen(function* () {
            yield* places.hold(subscriber)
            const organization = yield* CurrentOrganization
            const mailbox = yield* Queue.sliding<Message>(1)
            yield* join(feed, organization, projectId, mailbox)
            return Stream.flattenTake(Stream.fromQueue(mailbox))
          }),
        ),
      /**
       * Shuts the feed down before its scope closes (a server's shutdown, so that open subscriptions'
       * responses can complete first): every stream ends, and new ones end at once.
       */
      close: closing,
      /** Projects read on behalf of subscribers now, and whether the notification channel is listened to. */
      activity: Effect.sync(() => ({ projects: feed.hubs.size, listening: feed.listening !== undefined })),
    }
  }),
  dependencies: [Projects.Default, Launches.Default, LiveSubscriptions.Default],
}) {}
