/**
 * Documents with their tags. An upload or an extracted attachment is inserted together with its parse
 * task (`ParseTasks.ts`), so no Pending version lacks one. Driver errors are defects; "not found" is
 * `undefined`, for the caller to name. Pages live in `Pages.ts`.
 */
import { uploadedDocument } from "@dxs/domain/DocumentState"
import { Effect } from "effect"
import { sql } from "kysely"
import type { Conn } from "../Db.ts"
import type { DocumentRow } from "../Schema.ts"
import { pageWindow } from "./PageWindow.ts"
import { enqueueParse } from "./ParseTasks.ts"

/** A new document (version 1, Pending) as an upload or an extracted attachment gives it. */
export interface NewDocument {
  readonly id: string
  readonly project_id: string
  readonly file_name: string
  readonly type: string
  readonly blob_key: string
  readonly content_type: string
  readonly size_bytes: number
  readonly sha256: string
  readonly parent_document_id: string | null
}

/** Inserts a Pending document (version 1) and enqueues its parse task, in `conn`'s transaction. */
export const insertDocumentAndEnqueueParse = (
  conn: Conn,
  document: NewDocument,
): Effect.Effect<DocumentRow> =>
  Effect.flatMap(
    Effect.promise(() =>
      conn
        .insertInto("documents")
        .values({
          ...document,
          ...uploadedDocument(),
          failure_reason: null,
          last_parsed_at: null,
          archive_requested_at: null,
          uploaded_at: sql<Date>`clock_timestamp()`,
        })
        .returningAll()
        .executeTakeFirstOrThrow(),
    ),
    (row) => Effect.as(enqueueParse(conn, row.id, 1, row.project_id), row),
  )

export const findDocument = (db: Conn, documentId: string): Effect.Effect<DocumentRow | undefined> =>
  Effect.promise(() => db.selectFrom("documents").selectAll().where("id", "=", documentId).executeTakeFirst())

/**
 * The document, locked until the transaction ends (`for no key update`, as every lock of a document here:
 * writers of the document take turns, while rows that merely reference it, such as its tags, pages and the
 * project's tallies, can still be written; `for update` would make those wait as well, and a writer holding
 * the project while it writes the document's tags then deadlocks with a parse holding the document while it
 * writes the project's tallies).
 */
export const lockDocument = (trx: Conn, documentId: string): Effect.Effect<DocumentRow | undefined> =>
  Effect.promise(() =>
    trx.selectFrom("documents").selectAll().where("id", "=", documentId).forNoKeyUpdate().executeTakeFirst(),
  )

const inProject = (db: Conn, projectId: string, documentId: string) =>
  db.selectFrom("documents").selectAll().where("id", "=", documentId).where("project_id", "=", projectId)

export const findDocumentInProject = (
  db: Conn,
  projectId: string,
  documentId: string,
): Effect.Effect<DocumentRow | undefined> =>
  Effect.promise(() => inProject(db, projectId, documentId).executeTakeFirst())

/** The document of the project, locked until the transaction ends. */
export const lockDocumentInProject = (
  trx: Conn,
  projectId: string,
  documentId: string,
): Effect.Effect<DocumentRow | undefined> =>
  Effect.promise(() => inProject(trx, projectId, documentId).forNoKeyUpdate().executeTakeFirst())

/** The documents among `ids` of the project, in no particular order. */
export const documentsOfProject = (
  db: Conn,
  projectId: string,
  ids: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<DocumentRow>> =>
  Effect.promise(() =>
    db
      .selectFrom("documents")
      .selectAll()
      .where("project_id", "=", projectId)
      .where("id", "in", ids)
      .execute(),
  )

/** The documents of the projects, most recently uploaded first; with a tag, only those that have it. */
export const listDocuments = (
  db: Conn,
  projectIds: ReadonlyArray<string>,
  tag?: { readonly key: string; readonly value: string } | undefined,
): Effect.Effect<ReadonlyArray<DocumentRow>> =>
  Effect.promise(() => {
    let q = db.selectFrom("documents as d").selectAll("d").where("d.project_id", "in", projectIds)
    if (tag !== undefined)
      q = q.where((eb) =>
        eb.exists(
          eb
            .selectFrom("document_tags as t")
            .select("t.document_id")
            .whereRef("t.document_id", "=", "d.id")
            .where("t.key", "=", tag.key)
            .where("t.value", "=", tag.value),
        ),
      )
    return q.orderBy("d.uploaded_at", "desc").orderBy("d.id", "desc").execute()
  })

/** What a page of a project's documents keeps (all given filters at once). */
export interface DocumentPageFilter {
  /** A case-insensitive substring of the file name. */
  readonly search?: string | undefined
  readonly status?: string | undefined
  readonly tag?: { readonly key: string; readonly value: string } | undefined
  /** That message's attachments; without it, the documents without a parent. */
  readonly parentDocumentId?: string | undefined
}

/** Where a document stands in the page's order (newest first): its upload time (microseconds) and id. */
export type DocumentKey = readonly [uploaded: string, id: string]

/** A page from a position: an offset, or the documents after (or before) a document's key at a known offset. */
export type DocumentWindow =
  | { readonly limit: number; readonly offset: number }
  | {
      readonly limit: number
      readonly after?: DocumentKey | undefined
      readonly before?: DocumentKey | undefined
      readonly position: number
    }

/** `%`, `_` and the escape character itself taken literally in a LIKE pattern (escape `\`). */
export const likeLiteral = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`)

/** The page's documents: the filter's conditions on `d` (each matched by an index). */
const pageConditions = (projectId: string, filter: DocumentPageFilter) => {
  const where = [sql`d.project_id = ${projectId}::uuid`]
  where.push(
    filter.parentDocumentId === undefined
      ? sql`d.parent_document_id is null`
      : sql`d.parent_document_id = ${filter.parentDocumentId}::uuid`,
  )
  if (filter.search !== undefined)
    where.push(sql`d.file_name ilike ${`%${likeLiteral(filter.search)}%`} escape '\\'`)
  if (filter.status !== undefined) where.push(sql`d.status = ${filter.status}`)
  const tag = filter.tag
  if (tag !== undefined)
    where.push(sql`exists (select 1 from document_tags t where t.document_id = d.id
      and t.key = ${tag.key} and t.value = ${tag.value})`)
  return sql.join(where, sql` and `)
}

/** How many documents pass the filter: from the tallies for none or a status, else counted (an expression). */
const pageCount = (projectId: string, filter: DocumentPageFilter) =>
  filter.parentDocumentId === undefined && filter.search === undefined && filter.tag === undefined
    ? sql`(select coalesce(sum(n), 0)::int from document_tallies
        where project_id = ${projectId}::uuid and not is_attachment
          ${filter.status === undefined ? sql`` : sql`and status = ${filter.status}`})`
    : sql`(select count(*)::int from documents d where ${pageConditions(projectId, filter)})`

/** A document of a page, with its number of attachments, its tags and its key in the page's order. */
export type PageDocumentRow = DocumentRow & {
  readonly attachment_count: number
  readonly tags: ReadonlyArray<TagRow>
  readonly key: DocumentKey
}

/**
 * In one statement: whether the project is the organisation's, how many of its documents pass the filter
 * (from the tallies the documents' writes keep, unless a search, a tag or a parent narrows them), and a page
 * of them, most recently uploaded first (by offset or by key), each with its number of attachments, its
 * tags and its key. A name search is indexed by trigrams where the server has pg_trgm.
 */
export const pageOfDocuments = (
  db: Conn,
  organizationId: string,
  projectId: string,
  filter: DocumentPageFilter,
  window: DocumentWindow,
): Effect.Effect<{
  readonly found: boolean
  readonly count: number
  readonly offset: number
  readonly rows: ReadonlyArray<PageDocumentRow>
}> =>
  Effect.promise(async () => {
    const byKey = "offset" in window ? undefined : window
    const edge = byKey?.after ?? byKey?.before
    const backwards = byKey?.before !== undefined
    const at = (key: DocumentKey) =>
      sql`(timestamptz 'epoch' + ${key[0]}::bigint * interval '1 microsecond', ${key[1]}::uuid)`
    const past =
      edge === undefined
        ? sql``
        : sql`and (d.uploaded_at, d.id) ${sql.raw(backwards ? ">" : "<")} ${at(edge)}`
    const dir = sql.raw(backwards ? "asc" : "desc")
    const { rows } = await sql<{
      found: boolean
      count: number
      rows: ReadonlyArray<
        DocumentRow & { attachment_count: number; tags: ReadonlyArray<TagRow>; key_uploaded: string }
      >
    }>`
      with page as (
        select d.*, (select count(*)::int from documents a where a.parent_document_id = d.id) as attachment_count,
               (select coalesce(json_agg(json_build_object('key', t.key, 'value', t.value)), '[]'::json)
                from document_tags t where t.document_id = d.id) as tags,
               (extract(epoch from d.uploaded_at) * 1000000)::bigint::text as key_uploaded
        from documents d
        where ${pageConditions(projectId, filter)} ${past}
        order by d.uploaded_at ${dir}, d.id ${dir}
        ${pageWindow(window.limit, "offset" in window ? window.offset : 0)}
      )
      select exists (select 1 from projects where id = ${projectId}::uuid and organization_id = ${organizationId}::uuid) as found,
             ${pageCount(projectId, filter)} as count,
             (select coalesce(json_agg(page), '[]'::json) from page) as rows`.execute(db)
    const r = rows[0]!
    const found = r.rows.map(({ key_uploaded, ...row }) => ({
      ...row,
      uploaded_at: new Date(row.uploaded_at),
      last_parsed_at: row.last_parsed_at === null ? null : new Date(row.last_parsed_at),
      archive_requested_at: row.archive_requested_at === null ? null : new Date(row.archive_requested_at),
      key: [key_uploaded, row.id] as DocumentKey,
    }))
    if (backwards) found.reverse()
    const offset =
      "offset" in window
        ? window.offset
        : backwards
          ? Math.max(0, window.position - found.length)
          : window.position
    return { found: r.found, count: r.count, offset, rows: found }
  })

/** Where the document's current version is stored, if the document still exists. */
export const currentBlobKey = (db: Conn, documentId: string): Effect.Effect<string | undefined> =>
  Effect.promise(async () => {
    const row = await db
      .selectFrom("documents")
      .select("blob_key")
      .where("id", "=", documentId)
      .executeTakeFirst()
    return row?.blob_key
  })

/** Documents extracted from this one (e-mail attachments), and theirs, in the same project. */
export const documentsExtractedFrom = (
  trx: Conn,
  projectId: string,
  documentId: string,
): Effect.Effect<ReadonlyArray<{ id: string; blob_key: string; page_count: number }>> =>
  Effect.promise(async () => {
    const r = await sql<{ id: string; blob_key: string; page_count: number }>`
      with recursive tree(id) as (
        select id from documents where parent_document_id = ${documentId} and project_id = ${projectId}
        union
        select d.id from documents d join tree t on d.parent_document_id = t.id where d.project_id = ${projectId}
      )
      select d.id, d.blob_key, d.page_count from documents d join tree using (id)
    `.execute(trx)
    return r.rows
  })

/** A document of an attachment tree: what its content needs to be written out. */
export interface AttachedDocument {
  readonly id: string
  readonly parent_document_id: string | null
  readonly file_name: string
  readonly type: string
  readonly status: string
}

/**
 * The documents attached to this one (e-mail attachments) and theirs, at most `maxDepth` levels down and
 * `limit` in all, in the order they were extracted (upload time, then id).
 */
export const attachmentTree = (
  db: Conn,
  projectId: string,
  documentId: string,
  maxDepth: number,
  limit: number,
): Effect.Effect<ReadonlyArray<AttachedDocument>> =>
  Effect.promise(async () => {
    const r = await sql<AttachedDocument>`
      with recursive tree(id, depth) as (
        select id, 1 from documents where parent_document_id = ${documentId} and project_id = ${projectId}
        union
        select d.id, t.depth + 1 from documents d join tree t on d.parent_document_id = t.id
        where d.project_id = ${projectId} and t.depth < ${maxDepth}
      )
      select d.id, d.parent_document_id, d.file_name, d.type, d.status
      from documents d join tree using (id)
      order by d.uploaded_at, d.id
      limit ${limit}
    `.execute(db)
    return r.rows
  })

/**
 * How many attachments up a document with this parent is: 0 without a parent, 1 for an attachment of an
 * upload, 2 for an attachment of an attached message… Counted up to `limit` at most.
 */
export const attachmentLevel = (
  db: Conn,
  parentDocumentId: string | null,
  limit: number,
): Effect.Effect<number> =>
  parentDocumentId === null
    ? Effect.succeed(0)
    : Effect.promise(async () => {
        const r = await sql<{ level: number }>`
          with recursive up (parent, level) as (
            select ${parentDocumentId}::uuid, 1
            union all
            select d.parent_document_id, up.level + 1
            from documents d join up on d.id = up.parent
            where d.parent_document_id is not null and up.level < ${limit}
          )
          select max(level)::int as level from up
        `.execute(db)
        return r.rows[0]?.level ?? 0
      })

export const deleteDocuments = (trx: Conn, ids: ReadonlyArray<string>): Effect.Effect<void> =>
  ids.length === 0
    ? Effect.void
    : Effect.promise(() => trx.deleteFrom("documents").where("id", "in", ids).execute())

/** The file and outcome of a new version of a document (its parse has not run yet). */
export interface NewVersion {
  readonly file_name: string
  readonly type: string
  readonly version: number
  readonly status: string
  readonly blob_key: string
  readonly content_type: string
  readonly size_bytes: number
  readonly sha256: string
}

/** Makes the document a new version: its pages go, its page count, summary, metadata and failure reset. */
export const startNewVersion = (
  trx: Conn,
  documentId: string,
  version: NewVersion,
): Effect.Effect<DocumentRow> =>
  Effect.promise(async () => {
    await trx.deleteFrom("pages").where("document_id", "=", documentId).execute()
    return trx
      .updateTable("documents")
      .set({ ...version, page_count: 0, summary: "", metadata: "", failure_reason: null })
      .where("id", "=", documentId)
      .returningAll()
      .executeTakeFirstOrThrow()
  })

/** Sets `archive_requested_at` to now. */
export const requestDocumentArchive = (trx: Conn, documentId: string): Effect.Effect<DocumentRow> =>
  Effect.promise(() =>
    trx
      .updateTable("documents")
      .set({ archive_requested_at: sql<Date>`now()` })
      .where("id", "=", documentId)
      .returningAll()
      .executeTakeFirstOrThrow(),
  )

/**
 * Requests archival of every document of a live project with `auto_archive_after_days` that was uploaded
 * more than that many days ago and is not already requested; returns them.
 */
export const requestDueArchivals = (
  trx: Conn,
): Effect.Effect<ReadonlyArray<{ readonly id: string; readonly project_id: string }>> =>
  Effect.promise(async () => {
    const due = await sql<{ id: string; project_id: string }>`
      update documents d set archive_requested_at = now()
      from projects p
      where d.project_id = p.id
        and p.archived_at is null
        and p.auto_archive_after_days is not null
        and d.archive_requested_at is null
        and d.uploaded_at < now() - make_interval(days => p.auto_archive_after_days)
      returning d.id, d.project_id
    `.execute(trx)
    return due.rows
  })

/** The next midnight UTC by the database clock, and its day (`YYYY-MM-DD`). */
export const nextUtcMidnight = (conn: Conn): Effect.Effect<{ readonly at: Date; readonly day: string }> =>
  Effect.promise(async () => {
    const next = await sql<{ at: Date; day: string }>`
      select (date_trunc('day', now() at time zone 'utc') + interval '1 day') at time zone 'utc' as at,
             to_char(date_trunc('day', now() at time zone 'utc') + interval '1 day', 'YYYY-MM-DD') as day
    `.execute(conn)
    return next.rows[0]!
  })

/** The project a document is in, and whether its archival is requested; locked until the transaction ends. */
export const lockArchivalState = (
  trx: Conn,
  documentId: string,
): Effect.Effect<{ readonly project_id: string; readonly archive_requested_at: Date | null } | undefined> =>
  Effect.promise(() =>
    trx
      .selectFrom("documents")
      .select(["project_id", "archive_requested_at"])
      .where("id", "=", documentId)
      .forNoKeyUpdate()
      .executeTakeFirst(),
  )

export const moveDocument = (trx: Conn, documentId: string, projectId: string): Effect.Effect<void> =>
  Effect.promise(() =>
    trx.updateTable("documents").set({ project_id: projectId }).where("id", "=", documentId).execute(),
  )

/** A copy of a document under a new id and key, its pages included (tags are written apart). */
export const insertDocumentCopy = (
  trx: Conn,
  source: DocumentRow,
  copy: {
    readonly id: string
    readonly project_id: string
    readonly blob_key: string
    readonly parent_document_id: string | null
  },
): Effect.Effect<void> =>
  Effect.promise(async () => {
    await trx
      .insertInto("documents")
      .values({
        id: copy.id,
        project_id: copy.project_id,
        file_name: source.file_name,
        type: source.type,
        status: source.status,
        page_count: source.page_count,
        version: source.version,
        summary: source.summary,
        metadata: source.metadata,
        failure_reason: source.failure_reason,
        uses_agentic_extraction: source.uses_agentic_extraction,
        last_parsed_at: source.last_parsed_at,
        archive_requested_at: null,
        blob_key: copy.blob_key,
        content_type: source.content_type,
        size_bytes: source.size_bytes,
        sha256: source.sha256,
        parent_document_id: copy.parent_document_id,
        uploaded_at: sql<Date>`clock_timestamp()`,
      })
      .execute()
    await sql`
      insert into pages (document_id, number, text, layout, tables, blocks, width, height, unit)
      select ${copy.id}, number, text, layout, tables, blocks, width, height, unit
      from pages where document_id = ${source.id}
    `.execute(trx)
  })

// Tags

export interface TagRow {
  readonly key: string
  readonly value: string
}

/** Each document's tags (documents without tags are absent), in no particular order. */
export const tagsOfDocuments = (
  db: Conn,
  documentIds: ReadonlyArray<string>,
): Effect.Effect<Map<string, Array<TagRow>>> =>
  Effect.promise(async () => {
    const byDocument = new Map<string, Array<TagRow>>()
    if (documentIds.length === 0) return byDocument
    const rows = await db
      .selectFrom("document_tags")
      .select(["document_id", "key", "value"])
      .where("document_id", "in", documentIds)
      .execute()
    for (const r of rows) {
      const list = byDocument.get(r.document_id) ?? []
      list.push({ key: r.key, value: r.value })
      byDocument.set(r.document_id, list)
    }
    return byDocument
  })

/** Each document's parse metadata (JSON as the parse stage wrote it; "" before a parse). */
export const metadataOfDocuments = (
  db: Conn,
  documentIds: ReadonlyArray<string>,
): Effect.Effect<ReadonlyMap<string, string>> =>
  Effect.promise(async () => {
    if (documentIds.length === 0) return new Map()
    const rows = await db
      .selectFrom("documents")
      .select(["id", "metadata"])
      // One array parameter, whatever the number of documents.
      .where(sql<boolean>`id = any(${sql.val(documentIds)}::uuid[])`)
      .execute()
    return new Map(rows.map((r) => [r.id, r.metadata]))
  })

/** The tag keys the project's documents use, apart from those of the documents `except`. */
export const tagKeysOfProject = (
  db: Conn,
  projectId: string,
  except: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<string>> =>
  Effect.promise(async () => {
    let q = db
      .selectFrom("document_tags as t")
      .innerJoin("documents as d", "d.id", "t.document_id")
      .where("d.project_id", "=", projectId)
      .select("t.key")
      .distinct()
    if (except.length > 0) q = q.where("d.id", "not in", except)
    return (await q.execute()).map((r) => r.key)
  })

/** Replaces every tag of the document. */
export const replaceTags = (
  trx: Conn,
  documentId: string,
  tags: ReadonlyArray<TagRow>,
): Effect.Effect<void> =>
  Effect.promise(async () => {
    await trx.deleteFrom("document_tags").where("document_id", "=", documentId).execute()
    if (tags.length > 0)
      await trx
        .insertInto("document_tags")
        .values(tags.map((t) => ({ document_id: documentId, key: t.key, value: t.value })))
        .execute()
  })
