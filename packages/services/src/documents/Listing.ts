/**
 * Reading documents: a project's list (or several projects' at once), the documents panel's page, one
 * document.
 */
import { withDb } from "@dxs/db"
import * as Repo from "@dxs/db/repositories/Documents"
import type { DocumentsPage } from "@dxs/domain/contract/Document"
import type { DocumentStatus } from "@dxs/domain/Enums"
import type { Document } from "@dxs/domain/Records"
import { Effect, Schema } from "effect"
import { CurrentOrganization } from "../CurrentOrganization.ts"
import { BadRequest, NotFound } from "../Errors.ts"
import { pageLinks, pageStart } from "../Paging.ts"
import { byProject, oneProject, projectsOfOrganization } from "../Projects.ts"
import { type DocumentsEnv, findDocument } from "./Records.ts"
import { byKey } from "./Tags.ts"

/** The documents `list` keeps: with tag `tagKey` of value `tagValue` (both or neither). */
export interface DocumentFilter {
  readonly tagKey?: string | undefined
  readonly tagValue?: string | undefined
}

/** The documents panel's page: paging and filters (`page`). */
export interface DocumentPageQuery {
  readonly limit?: number | undefined
  readonly offset?: number | undefined
  /** A case-insensitive substring of the name, 1 to 200 characters. */
  readonly search?: string | undefined
  readonly status?: DocumentStatus | undefined
  readonly tag_key?: string | undefined
  readonly tag_value?: string | undefined
  /** That message's attachments; without it, documents without a parent. */
  readonly parent_document_id?: string | undefined
  /** Where the page starts, from a `next` or `previous` link. */
  readonly cursor?: string | undefined
}

/** The key of a document of the page, as a cursor carries it (`Repo.DocumentKey`). */
const DocumentCursorKey = Schema.Tuple(Schema.String.pipe(Schema.pattern(/^-?\d{1,20}$/)), Schema.UUID)

export const DOCUMENTS_PAGE_DEFAULT_LIMIT = 50
export const DOCUMENTS_PAGE_MAX_LIMIT = 500
export const DOCUMENT_SEARCH_MAX_LENGTH = 200

export const listing = ({ records, provide }: DocumentsEnv) => {
  const { documentsWithTags, toDocuments, toDocument } = records
  /** Each project's documents as `list` gives them; projects not of the current organisation are absent. */
  const listForProjects = (projectIds: ReadonlyArray<string>, filter: DocumentFilter = {}) =>
    Effect.gen(function* () {
      const org = yield* CurrentOrganization
      if ((filter.tagKey === undefined) !== (filter.tagValue === undefined))
        return yield* BadRequest.of("tag_key and tag_value filter together: supply both or neither", [
          {
            path: filter.tagKey === undefined ? "tag_key" : "tag_value",
            message: "required with the other",
          },
        ])
      return yield* withDb((db) =>
        Effect.gen(function* () {
          const ids = yield* projectsOfOrganization(db, org.id, projectIds)
          if (ids.length === 0) return new Map<string, ReadonlyArray<Document>>()
          const rows = yield* Repo.listDocuments(
            db,
            ids,
            filter.tagKey !== undefined && filter.tagValue !== undefined
              ? { key: filter.tagKey, value: filter.tagValue }
              : undefined,
          )
          return byProject(ids, yield* toDocuments(db, rows), (d) => d.project_id)
        }),
      )
    })

  return {
    /** Most recently uploaded first; optionally only documents whose tag `tagKey` has value `tagValue`. */
    list: (projectId: string, filter: DocumentFilter) =>
      Effect.flatMap(listForProjects([projectId], filter), (lists) => oneProject(projectId, lists)).pipe(
        provide,
      ),

    /**
     * A page of the project's documents for the documents panel (beyond the contract): most recently
     * uploaded first, filtered by name, status, tag and parent (default: top-level documents only), with
     * each one's number of attachments; `next`/`previous` are relative links that keep the filters.
     */
    page: (projectId: string, query: DocumentPageQuery) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        const limit = query.limit ?? DOCUMENTS_PAGE_DEFAULT_LIMIT
        const offset = query.offset ?? 0
        if (!Number.isInteger(limit) || limit < 1 || limit > DOCUMENTS_PAGE_MAX_LIMIT)
          return yield* BadRequest.of(`limit must be a whole number from 1 to ${DOCUMENTS_PAGE_MAX_LIMIT}`, [
            { path: "limit", message: `must be a whole number from 1 to ${DOCUMENTS_PAGE_MAX_LIMIT}` },
          ])
        if (!Number.isInteger(offset) || offset < 0)
          return yield* BadRequest.of("offset must be a whole number of at least 0", [
            { path: "offset", message: "must be a whole number of at least 0" },
          ])
        const search = query.search
        if (search !== undefined && (search.length < 1 || search.length > DOCUMENT_SEARCH_MAX_LENGTH))
          return yield* BadRequest.of(`search must be 1 to ${DOCUMENT_SEARCH_MAX_LENGTH} characters`, [
            { path: "search", message: `must be 1 to ${DOCUMENT_SEARCH_MAX_LENGTH} characters` },
          ])
        if ((query.tag_key === undefined) !== (query.tag_value === undefined))
          return yield* BadRequest.of("tag_key and tag_value filter together: supply both or neither", [
            {
              path: query.tag_key === undefined ? "tag_key" : "tag_value",
              message: "required with the other",
            },
          ])
        const start = yield* pageStart(DocumentCursorKey, query)
        return yield* withDb((db) =>
          Effect.gen(function* () {
            // One statement: the project's ownership, the count and the page with its tags.
            const page = yield* Repo.pageOfDocuments(
              db,
              org.id,
              projectId,
              {
                search,
                status: query.status,
                tag:
                  query.tag_key !== undefined && query.tag_value !== undefined
                    ? { key: query.tag_key, value: query.tag_value }
                    : undefined,
                parentDocumentId: query.parent_document_id,
              },
              start === undefined ? { limit, offset } : { limit, ...start },
            )
            if (!page.found) return yield* NotFound.of("Project", projectId)
            const { count, rows } = page
            const documents = yield* documentsWithTags(
              rows,
              new Map(rows.map((r) => [r.id, [...r.tags].sort(byKey)])),
            )
            return {
              count,
              ...pageLinks(
                [
                  ["search", query.search],
                  ["status", query.status],
                  ["tag_key", query.tag_key],
                  ["tag_value", query.tag_value],
                  ["parent_document_id", query.parent_document_id],
                ],
                {
                  count,
                  limit,
                  offset: page.offset,
                  rows: rows.length,
                  first: rows[0]?.key,
                  last: rows[rows.length - 1]?.key,
                },
              ),
              results: documents.map((d, i) => ({ ...d, attachment_count: rows[i]!.attachment_count })),
            } satisfies DocumentsPage
          }),
        )
      }).pipe(provide),

    /** For each of the projects that is the organisation's (the others are absent), its `list`. */
    listForProjects: (projectIds: ReadonlyArray<string>, filter?: DocumentFilter) =>
      listForProjects(projectIds, filter).pipe(provide),

    get: (projectId: string, documentId: string) =>
      Effect.gen(function* () {
        const org = yield* CurrentOrganization
        return yield* withDb((db) =>
          Effect.flatMap(findDocument(db, org.id, projectId, documentId), (row) => toDocument(db, row)),
        )
      }).pipe(provide),
  }
}
