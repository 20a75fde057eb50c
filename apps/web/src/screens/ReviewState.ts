/**
 * The review screen's state: the document's values (the results grid's rows with `document_id`), the
 * selected one, its editing, the review and override requests, the queue's neighbours and the keys
 * (j/k, a, r, e, n/p; none of them while typing in a field).
 */
import type {
  ResultDetail,
  ResultsGrid,
  ResultsGridCell,
  ResultsGridColumn,
  ReviewQueue,
} from "@dxs/domain/Records"
import { useMutation } from "@tanstack/react-query"
import { useCallback, useEffect, useRef, useState } from "react"
import { api, seg } from "../api.ts"
import { invalidateApi, useApiQuery } from "../query.ts"
import { navigate } from "../router.tsx"
import { overrideValue } from "../values.ts"

/** Grid rows of one document read at once (its combinations of other dimension values). */
const DOCUMENT_ROWS = 100

export const reviewPath = (projectId: string, documentId: string): string =>
  `/projects/${seg(projectId)}/documents/${seg(documentId)}/review`

/** The review queue: its first document, or the one after (before) a document, with the totals. */
export const reviewQueuePath = (
  projectId: string,
  from?: { readonly after: string } | { readonly before: string },
): string =>
  `/projects/${seg(projectId)}/review/queue/?limit=1${
    from === undefined
      ? ""
      : "after" in from
        ? `&after_document=${seg(from.after)}`
        : `&before_document=${seg(from.before)}`
  }`

/** One value of the document: an agent's cell in one of the document's rows. */
export interface ReviewValue {
  readonly key: string
  readonly rowName: string
  readonly column: ResultsGridColumn
  readonly cell: ResultsGridCell
}

/** The values of the document's rows of the grid, row by row, each row's agents oldest first. */
const valuesOf = (grid: ResultsGrid | undefined): ReadonlyArray<ReviewValue> =>
  (grid?.rows ?? []).flatMap((row) =>
    grid!.columns.flatMap((column) => {
      const cell = row.cells[column.agent_id]
      return cell === undefined
        ? []
        : [{ key: `${row.key}/${column.agent_id}`, rowName: row.name, column, cell }]
    }),
  )

/** The keys do nothing while typing in a field (or with a modifier held). */
const isTyping = (e: globalThis.KeyboardEvent): boolean => {
  if (e.ctrlKey || e.metaKey || e.altKey) return true
  const t = e.target
  if (!(t instanceof HTMLElement)) return false
  return t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName)
}

/** Whether a value has been reviewed: marked correct or wrong, or set by hand. */
export const isReviewed = (v: ReviewValue): boolean =>
  v.cell.latest_review_status === "positive" ||
  v.cell.latest_review_status === "negative" ||
  v.cell.is_overridden

/** The review of one document: its values, the selection, the requests and the keys. */
export const useReview = (projectId: string, documentId: string) => {
  const base = `/projects/${seg(projectId)}`
  const following = useApiQuery<ReviewQueue>(reviewQueuePath(projectId, { after: documentId }))
  const preceding = useApiQuery<ReviewQueue>(reviewQueuePath(projectId, { before: documentId }))
  const grid = useApiQuery<ResultsGrid>(
    `${base}/results/grid/?document_id=${seg(documentId)}&limit=${DOCUMENT_ROWS}`,
  )
  const values = valuesOf(grid.data)
  const [selected, setSelected] = useState(0)
  const [editing, setEditing] = useState(false)
  const [announcement, setAnnouncement] = useState("")
  const current: ReviewValue | undefined = values[Math.min(selected, values.length - 1)]
  const nextDoc = following.data?.documents[0]
  const previousDoc = preceding.data?.documents[0]

  const refresh = useCallback(async () => {
    await Promise.all([grid.reload(), following.reload(), preceding.reload()])
    void invalidateApi(`${base}/results/`)
  }, [grid.reload, following.reload, preceding.reload, base])

  const review = useMutation({
    mutationFn: async ({ value, status }: { value: ReviewValue; status: "positive" | "negative" }) =>
      api.post<ResultDetail>(`${base}/results/${seg(value.cell.resolution_result_id)}/review/`, {
        status,
        comment: "",
      }),
    onSuccess: async (_, { value, status }) => {
      await refresh()
      setAnnouncement(`${value.column.agent_name} marked ${status === "positive" ? "correct" : "wrong"}.`)
    },
  })
  const override = useMutation({
    mutationFn: async ({ value, text }: { value: ReviewValue; text: string }) =>
      api.patch<ResultDetail>(`${base}/results/${seg(value.cell.resolution_result_id)}/`, {
        value: overrideValue(text, value.column.value_type),
      }),
    onSuccess: async (_, { value }) => {
      setEditing(false)
      await refresh()
      setAnnouncement(`${value.column.agent_name} saved.`)
    },
  })
  const actionError = review.error ?? override.error

  const goTo = useCallback(
    (doc: { readonly document_id: string } | undefined) => {
      if (doc !== undefined) navigate(reviewPath(projectId, doc.document_id))
    },
    [projectId],
  )

  const listRef = useRef<HTMLOListElement | null>(null)
  useEffect(() => {
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (isTyping(e) || editing) return
      const key = e.key
      if (key === "j" || key === "k") {
        if (values.length === 0) return
        e.preventDefault()
        setSelected((i) => {
          const from = Math.min(i, values.length - 1)
          return key === "j" ? Math.min(values.length - 1, from + 1) : Math.max(0, from - 1)
        })
      } else if ((key === "a" || key === "r") && current !== undefined) {
        e.preventDefault()
        review.mutate({ value: current, status: key === "a" ? "positive" : "negative" })
      } else if (key === "e" && current !== undefined) {
        e.preventDefault()
        setEditing(true)
      } else if (key === "n") {
        e.preventDefault()
        goTo(nextDoc)
      } else if (key === "p") {
        e.preventDefault()
        goTo(previousDoc)
      }
    }
    window.addEventListener("keydown", onKey)
    return () => window.removeEventListener("keydown", onKey)
  }, [values.length, current, editing, review.mutate, goTo, nextDoc, previousDoc])

  // The selected value stays in view as j/k move through a long list.
  useEffect(() => {
    listRef.current
      ?.querySelector<HTMLElement>(`[data-index="${selected}"]`)
      ?.scrollIntoView({ block: "nearest" })
  }, [selected])

  return {
    base,
    grid,
    following,
    preceding,
    values,
    current,
    selected,
    setSelected,
    editing,
    setEditing,
    announcement,
    review,
    override,
    actionError,
    nextDoc,
    previousDoc,
    listRef,
  }
}
