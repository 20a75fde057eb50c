/**
 * Tags of documents: validated, sorted, and spelled as the project already spells their keys.
 */
import type { Conn } from "@dxs/db"
import * as Repo from "@dxs/db/repositories/Documents"
import type { TagsValue } from "@dxs/domain/contract/Document"
import type { DocumentTag } from "@dxs/domain/Records"
import { Effect } from "effect"
import { BadRequest, type FieldError } from "../Errors.ts"

/** Tags as the API accepts them: a list of `{key, value}` or an object of key to value. */
export type TagsInput = TagsValue

export const MAX_TAG_KEY_LENGTH = 100

export const byKey = (a: DocumentTag, b: DocumentTag) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)

/** Validates tags (keys trimmed, non-empty, at most 100 characters, unique ignoring case) and sorts them. */
export const normalizeTags = (input: TagsInput, path = "tags") =>
  Effect.gen(function* () {
    const entries: ReadonlyArray<DocumentTag> = Array.isArray(input)
      ? (input as ReadonlyArray<DocumentTag>)
      : Object.entries(input).map(([key, value]) => ({ key, value }))
    const errors: Array<FieldError> = []
    const seen = new Map<string, string>()
    const tags: Array<DocumentTag> = []
    entries.forEach((tag, i) => {
      const at = Array.isArray(input) ? `${path}/${i}/key` : `${path}/${tag.key}`
      const key = tag.key.trim()
      if (key === "") errors.push({ path: at, message: "must not be empty" })
      else if (key.length > MAX_TAG_KEY_LENGTH)
        errors.push({ path: at, message: `must be at most ${MAX_TAG_KEY_LENGTH} characters` })
      else if (seen.has(key.toLowerCase()))
        errors.push({ path: at, message: `duplicate key "${key}" (keys are compared ignoring case)` })
      else {
        seen.set(key.toLowerCase(), key)
        tags.push({ key, value: tag.value })
      }
    })
    if (errors.length > 0)
      return yield* BadRequest.of(
        `Invalid tags: ${errors.map((e) => `${e.path}: ${e.message}`).join("; ")}`,
        errors,
      )
    return tags.sort(byKey)
  })

/**
 * TAG dimension names are unique ignoring case, so a key may not differ only in case from a key other
 * documents of the project already use.
 */
export const sameKeysAsProject = (
  trx: Conn,
  projectId: string,
  tags: ReadonlyArray<DocumentTag>,
  except: ReadonlyArray<string>,
) =>
  Effect.gen(function* () {
    if (tags.length === 0) return
    const existing = yield* Repo.tagKeysOfProject(trx, projectId, except)
    const byLower = new Map(existing.map((key) => [key.toLowerCase(), key]))
    const clashes = tags.flatMap((t) => {
      const other = byLower.get(t.key.toLowerCase())
      return other !== undefined && other !== t.key ? [{ key: t.key, other }] : []
    })
    if (clashes.length > 0)
      return yield* BadRequest.of(
        `Tag keys must match the spelling already used in the project: ${clashes
          .map((c) => `"${c.key}" (use "${c.other}")`)
          .join(", ")}`,
        clashes.map((c) => ({ path: "tags", message: `key "${c.key}" is already used as "${c.other}"` })),
      )
  })

export const tagsOf = (db: Conn, documentIds: ReadonlyArray<string>) =>
  Effect.map(
    Repo.tagsOfDocuments(db, documentIds),
    (byDocument): ReadonlyMap<string, ReadonlyArray<DocumentTag>> => {
      for (const list of byDocument.values()) list.sort(byKey)
      return byDocument
    },
  )
