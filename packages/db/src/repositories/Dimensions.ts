/**
 * Dimensions of a project: custom ones, the system Document dimension and one TAG dimension per document
 * tag key; with the reads of documents and tags that give system dimensions their values.
 */
import { Effect } from "effect"
import { sql, type Updateable } from "kysely"
import type { Conn } from "../Db.ts"
import type { DimensionRow, DimensionsTable } from "../Schema.ts"

export type { DimensionRow }

/** The columns a dimension's update may set. */
export type DimensionChange = Pick<
  Updateable<DimensionsTable>,
  "name" | "description" | "example_values" | "value_type" | "auto_attach_to_new_agents"
>

export interface NewCustomDimension {
  readonly project_id: string
  readonly name: string
  readonly description: string
  readonly example_values: string
  readonly value_type: string
  readonly auto_attach_to_new_agents: boolean
}

const run = <A>(f: () => Promise<A>): Effect.Effect<A> => Effect.promise(f)

/** A unique-index violation (a concurrent create or rename to the same name). */
const isUniqueViolation = (e: unknown) =>
  typeof e === "object" && e !== null && (e as { code?: unknown }).code === "23505"

/** `undefined` when the statement breaks the one-name-per-project index; other driver errors are defects. */
const unlessNameTaken = <A>(f: () => Promise<A>): Effect.Effect<A | undefined> =>
  Effect.tryPromise({ try: f, catch: (e) => e }).pipe(
    Effect.catchAll((e) => (isUniqueViolation(e) ? Effect.succeed(undefined) : Effect.die(e))),
  )

/** The projects' dimensions, oldest first. */
export const dimensionsOfProjects = (db: Conn, projectIds: ReadonlyArray<string>) =>
  projectIds.length === 0
    ? Effect.succeed<ReadonlyArray<DimensionRow>>([])
    : run(() =>
        db
          .selectFrom("dimensions")
          .selectAll()
          .where("project_id", "in", projectIds)
          .orderBy("created_at")
          .orderBy("id")
          .execute(),
      )

export const dimensionsOfProject = (db: Conn, projectId: string) => dimensionsOfProjects(db, [projectId])

/** A dimension of the project. */
export const findDimension = (
  db: Conn,
  projectId: string,
  id: string,
): Effect.Effect<DimensionRow | undefined> =>
  run(() =>
    db
      .selectFrom("dimensions")
      .selectAll()
      .where("id", "=", id)
      .where("project_id", "=", projectId)
      .executeTakeFirst(),
  )

/** A dimension of the project whose name, lower-cased, is `lowerName` (other than `exceptId`). */
export const dimensionNamed = (db: Conn, projectId: string, lowerName: string, exceptId?: string) =>
  run(() => {
    let q = db
      .selectFrom("dimensions")
      .select(["id", "name"])
      .where("project_id", "=", projectId)
      .where(sql`lower(name)`, "=", lowerName)
    if (exceptId !== undefined) q = q.where("id", "<>", exceptId)
    return q.executeTakeFirst()
  })

/** A tag key of the project's documents that, lower-cased, is `lowerKey`, as written. */
export const tagKeyNamed = (db: Conn, projectId: string, lowerKey: string) =>
  run(() =>
    db
      .selectFrom("document_tags as t")
      .innerJoin("documents as d", "d.id", "t.document_id")
      .where("d.project_id", "=", projectId)
      .where(sql`lower(t.key)`, "=", lowerKey)
      .select("t.key")
      .executeTakeFirst(),
  ).pipe(Effect.map((row) => row?.key))

/** Inserts a CUSTOM dimension; `undefined` when the project has one of that name already. */
export const insertCustomDimension = (db: Conn, dimension: NewCustomDimension) =>
  unlessNameTaken(() =>
    db
      .insertInto("dimensions")
      .values({ ...dimension, source: "CUSTOM" })
      .returningAll()
      .executeTakeFirstOrThrow(),
  )

/** Updates a dimension; `undefined` when the new name is taken in the project. */
export const updateDimension = (db: Conn, id: string, change: DimensionChange) =>
  unlessNameTaken(() =>
    db.updateTable("dimensions").set(change).where("id", "=", id).returningAll().executeTakeFirstOrThrow(),
  )

/** Sets fields of a dimension that no index constrains (its description, value type, auto-attach flag). */
export const changeDimension = (
  db: Conn,
  id: string,
  change: Pick<DimensionChange, "description" | "value_type" | "auto_attach_to_new_agents">,
) => run(() => db.updateTable("dimensions").set(change).where("id", "=", id).execute()).pipe(Effect.asVoid)

/** Deletes dimensions (their attachments go with them). */
export const deleteDimensions = (db: Conn, ids: ReadonlyArray<string>) =>
  ids.length === 0
    ? Effect.void
    : run(() => db.deleteFrom("dimensions").where("id", "in", ids).execute()).pipe(Effect.asVoid)

// ---------------------------------------------------------------------------------------------------------
// System dimensions' sources

/** The distinct tag keys used by the project's documents. */
export const tagKeysOfProject = (db: Conn, projectId: string) =>
  run(() =>
    db
      .selectFrom("document_tags as t")
      .innerJoin("documents as d", "d.id", "t.document_id")
      .where("d.project_id", "=", projectId)
      .select("t.key")
      .distinct()
      .execute(),
  ).pipe(Effect.map((rows) => rows.map((r) => r.key)))

export const insertTagDimension = (db: Conn, projectId: string, key: string) =>
  run(() =>
    db
      .insertInto("dimensions")
      .values({
        project_id: projectId,
        name: key,
        tag_key: key,
        source: "TAG",
        description: `Values of the document tag "${key}"`,
      })
      .execute(),
  ).pipe(Effect.asVoid)

/** A system dimension whose values are wanted (see `systemDimensionValues`). */
export interface SystemDimensionOf {
  readonly dimension_id: string
  readonly project_id: string
  readonly source: string
  readonly tag_key: string | null
}

/**
 * Current values of system dimensions (by dimension id): their project's document file names (DOCUMENT)
 * or the distinct values of their tag (TAG), one read per source however many projects and dimensions.
 */
export const systemDimensionValues = (db: Conn, dimensions: ReadonlyArray<SystemDimensionOf>) =>
  run(async () => {
    const unique = <A>(xs: ReadonlyArray<A>) => [...new Set(xs)]
    const documentProjects = unique(
      dimensions.filter((d) => d.source === "DOCUMENT").map((d) => d.project_id),
    )
    const tagged = dimensions.filter((d) => d.source === "TAG" && d.tag_key !== null)
    const files =
      documentProjects.length === 0
        ? []
        : await db
            .selectFrom("documents")
            .select(["project_id", "file_name"])
            .where("project_id", "in", documentProjects)
            .orderBy("uploaded_at")
            .orderBy("id")
            .execute()
    const tags =
      tagged.length === 0
        ? []
        : await db
            .selectFrom("document_tags as t")
            .innerJoin("documents as d", "d.id", "t.document_id")
            .where("d.project_id", "in", unique(tagged.map((d) => d.project_id)))
            .where("t.key", "in", unique(tagged.map((d) => d.tag_key!)))
            .select(["d.project_id", "t.key", "t.value"])
            .distinct()
            .orderBy(sql`t.value`)
            .execute()
    return new Map<string, ReadonlyArray<string>>(
      dimensions.map((d) => [
        d.dimension_id,
        d.source === "DOCUMENT"
          ? files.filter((f) => f.project_id === d.project_id).map((f) => f.file_name)
          : d.source === "TAG" && d.tag_key !== null
            ? tags.filter((t) => t.project_id === d.project_id && t.key === d.tag_key).map((t) => t.value)
            : [],
      ]),
    )
  })

/**
 * The dimension values that the project's results carry (values of dynamic dimensions are discovered at
 * extraction time), each pair once, in the order they first appeared.
 */
export const valuesInResults = (db: Conn, projectId: string) =>
  run(() =>
    sql<{ dimension_id: string; value: string }>`
      select d.dimension_id, d.value from (
        select dv->>'dimension_id' as dimension_id, dv->>'dimension_value' as value,
               min(av.created_at) as first_at
        from atomic_values av, jsonb_array_elements(av.dimension_values) dv
        where av.project_id = ${projectId}
        group by 1, 2
      ) d order by d.first_at, d.value`
      .execute(db)
      .then((r) => r.rows),
  )
