/**
 * The uploads of the documents panel: a queue that sends the picked or dropped files one at a time with
 * their progress (`useUploads`), and the drop zone with its file picker and the list of uploads
 * (`UploadPanel`).
 */

import { type DragEvent, useCallback, useRef, useState } from "react"
import { errorMessage, uploadFile } from "../api.ts"

interface Upload {
  readonly key: number
  readonly name: string
  readonly fraction: number
  readonly state: "waiting" | "uploading" | "done" | "failed"
  readonly error?: string
}

export interface Uploads {
  readonly uploads: ReadonlyArray<Upload>
  readonly addFiles: (files: FileList | ReadonlyArray<File>) => void
  /** Forgets the uploads that are done or failed. */
  readonly clearFinished: () => void
}

/** Files sent one after the other to `${base}/documents/`; `refresh` after each one that arrived. */
export function useUploads(base: string, refresh: () => Promise<void>): Uploads {
  const [uploads, setUploads] = useState<ReadonlyArray<Upload>>([])
  const queue = useRef<Promise<void>>(Promise.resolve())
  const nextKey = useRef(0)

  const update = useCallback((key: number, patch: Partial<Upload>) => {
    setUploads((all) => all.map((u) => (u.key === key ? { ...u, ...patch } : u)))
  }, [])

  const addFiles = (files: FileList | ReadonlyArray<File>) => {
    const list = Array.from(files)
    if (list.length === 0) return
    const entries = list.map((file) => ({ file, key: nextKey.current++ }))
    setUploads((all) => [
      ...all,
      ...entries.map(({ file, key }): Upload => ({ key, name: file.name, fraction: 0, state: "waiting" })),
    ])
    for (const { file, key } of entries) {
      queue.current = queue.current.then(async () => {
        update(key, { state: "uploading" })
        try {
          await uploadFile(`${base}/documents/`, file, (fraction) => update(key, { fraction }))
          update(key, { state: "done", fraction: 1 })
          await refresh()
        } catch (e) {
          update(key, { state: "failed", error: errorMessage(e) })
        }
      })
    }
  }

  const clearFinished = () =>
    setUploads((all) => all.filter((u) => u.state === "waiting" || u.state === "uploading"))

  return { uploads, addFiles, clearFinished }
}

/** The drop zone with the file picker, then the uploads under way or finished. */
export function UploadPanel({ uploads }: { readonly uploads: Uploads }) {
  const [dragging, setDragging] = useState(false)
  const input = useRef<HTMLInputElement>(null)
  const { addFiles } = uploads

  const onDrop = (e: DragEvent<HTMLDivElement>) => {
    e.preventDefault()
    setDragging(false)
    if (e.dataTransfer.files.length > 0) addFiles(e.dataTransfer.files)
  }

  return (
    <>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: a drop target for dragged files; the file input inside is the keyboard and screen reader way */}
      <div
        className={`drop-zone${dragging ? " dragging" : ""}`}
        data-testid="drop-zone"
        onDragEnter={(e) => {
          e.preventDefault()
          setDragging(true)
        }}
        onDragOver={(e) => {
          e.preventDefault()
          e.dataTransfer.dropEffect = "copy"
          if (!dragging) setDragging(true)
        }}
        onDragLeave={(e) => {
          if (e.currentTarget.contains(e.relatedTarget as Node | null)) return
          setDragging(false)
        }}
        onDrop={onDrop}
      >
        <UploadIcon />
        <div className="field">
          <label htmlFor="upload-documents">Upload documents</label>
          <input
            ref={input}
            id="upload-documents"
            type="file"
            multiple
            onChange={(e) => {
              if (e.target.files) addFiles(e.target.files)
              if (input.current) input.current.value = ""
            }}
          />
        </div>
        <p className="muted small">or drop files here (PDF, images, Office files, e-mails, text…)</p>
      </div>
      <UploadList uploads={uploads} />
    </>
  )
}

function UploadList({ uploads: { uploads, clearFinished } }: { readonly uploads: Uploads }) {
  if (uploads.length === 0) return null
  const finished = uploads.some((u) => u.state === "done" || u.state === "failed")
  return (
    <div className="uploads">
      <h3 className="visually-hidden">Uploads</h3>
      <ul className="upload-list">
        {uploads.map((u) => (
          <li key={u.key} className={`upload upload-${u.state}`} data-testid="upload">
            <span className="upload-name">{u.name}</span>
            {u.state === "waiting" && <span className="muted">Waiting…</span>}
            {u.state === "uploading" && (
              <>
                <progress max={100} value={Math.round(u.fraction * 100)} aria-label={`Upload of ${u.name}`} />
                <span>Uploading… {Math.round(u.fraction * 100)}%</span>
              </>
            )}
            {u.state === "done" && <span className="ok">Uploaded</span>}
            {u.state === "failed" && (
              <span role="alert" className="alert inline">
                {u.error}
              </span>
            )}
          </li>
        ))}
      </ul>
      {finished && (
        <button type="button" className="link-button" onClick={clearFinished}>
          Clear finished uploads
        </button>
      )}
    </div>
  )
}

function UploadIcon() {
  return (
    <svg
      className="icon"
      width="28"
      height="28"
      viewBox="0 0 24 24"
      aria-hidden="true"
      focusable="false"
      fill="none"
      stroke="currentColor"
      strokeWidth="1.8"
      strokeLinecap="round"
      strokeLinejoin="round"
    >
      <path d="M12 16V4M7 9l5-5 5 5M4 16v3a1 1 0 0 0 1 1h14a1 1 0 0 0 1-1v-3" />
    </svg>
  )
}
