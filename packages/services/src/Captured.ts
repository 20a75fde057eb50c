/**
 * How a service runs over what its layer was built with: `capture` takes the storage, the settings and
 * the other services it names when the layer is built, and `over` hands them to each of its methods, so
 * that a method's effect (or stream) still needs only the request scope (`CurrentOrganization`).
 */
import { Context, Effect, Stream } from "effect"

type AnyTag = Context.Tag<any, any>

/** What reading the tags needs: a reference has its default, so it needs nothing. */
type Needed<Tags extends ReadonlyArray<AnyTag>> = {
  readonly [K in keyof Tags]: Tags[K] extends Context.Reference<any, any>
    ? never
    : Context.Tag.Identifier<Tags[K]>
}[number]

/**
 * The services, storage and settings `tags` name, as they are when a layer is built (a setting left unset
 * at its default then). Only these: nothing else of the layer's building (its scope) reaches the methods.
 */
export const capture = <const Tags extends ReadonlyArray<AnyTag>>(
  ...tags: Tags
): Effect.Effect<Context.Context<Context.Tag.Identifier<Tags[number]>>, never, Needed<Tags>> =>
  Effect.reduce(tags, Context.empty() as Context.Context<any>, (context, tag) =>
    Effect.map(tag as AnyTag, (service) => Context.add(context, tag, service)),
  ) as Effect.Effect<Context.Context<Context.Tag.Identifier<Tags[number]>>, never, Needed<Tags>>

/** Each method of `M` with `R` provided: its effect or stream needs only what remains (the request scope). */
export type Over<M, R> = {
  readonly [K in keyof M]: M[K] extends (...args: infer Args) => Effect.Effect<infer A, infer E, infer Q>
    ? (...args: Args) => Effect.Effect<A, E, Exclude<Q, R>>
    : M[K] extends (...args: infer Args) => Stream.Stream<infer A, infer E, infer Q>
      ? (...args: Args) => Stream.Stream<A, E, Exclude<Q, R>>
      : M[K]
}

const provided = <R>(context: Context.Context<R>, value: unknown): unknown =>
  Effect.isEffect(value)
    ? Effect.provide(value, context)
    : typeof value === "object" && value !== null && Stream.StreamTypeId in value
      ? Stream.provideSomeContext(value as Stream.Stream<unknown, unknown, unknown>, context)
      : value

/**
 * The methods with `context` provided to the effect or stream each returns (other values, such as a
 * number or an effect that needs nothing, stay as they are); a method's request scope comes from its
 * caller, and what `context` holds wins over the caller's.
 */
export const over = <R, M extends Record<string, unknown>>(
  context: Context.Context<R>,
  methods: M,
): Over<M, R> =>
  Object.fromEntries(
    Object.entries(methods).map(([name, method]) => [
      name,
      typeof method === "function"
        ? (...args: ReadonlyArray<unknown>) => provided(context, method(...args))
        : method,
    ]),
  ) as Over<M, R>
