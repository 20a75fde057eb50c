/**
 * A textarea that completes agent mentions: typing `@` (then part of a name) lists the matching agent
 * names; Arrow keys choose, Enter (or a click) inserts the name as the domain writes it (`@Name`, or
 * `@"Long Name"` when it is more than letters, digits and underscores); Escape closes the list. The textarea keeps the focus and points
 * at the active option with aria-activedescendant.
 */
import { mentionBeforeCaret, mentionToken, type PartialMention } from "@dxs/domain/AgentReferences"
import { type KeyboardEvent, useLayoutEffect, useMemo, useRef, useState } from "react"

const MAX_OPTIONS = 8

/** The names that match a query: those starting with it first, then those containing it. */
export const matchingNames = (names: ReadonlyArray<string>, query: string): ReadonlyArray<string> => {
  const q = query.toLocaleLowerCase()
  const starts: Array<string> = []
  const contains: Array<string> = []
  for (const name of names) {
    const n = name.toLocaleLowerCase()
    if (n.startsWith(q)) starts.push(name)
    else if (n.includes(q)) contains.push(name)
  }
  return [...starts, ...contains].slice(0, MAX_OPTIONS)
}

export function AgentMentionField({
  id,
  value,
  onChange,
  names,
  rows = 4,
  describedBy,
  invalid,
}: {
  readonly id: string
  readonly value: string
  readonly onChange: (value: string) => void
  /** The agent names that can be mentioned. */
  readonly names: ReadonlyArray<string>
  readonly rows?: number
  readonly describedBy?: string | undefined
  readonly invalid?: boolean
}) {
  const ref = useRef<HTMLTextAreaElement>(null)
  const [mention, setMention] = useState<PartialMention | null>(null)
  const [active, setActive] = useState(0)
  const caretAfterInsert = useRef<number | null>(null)
  const lastCaret = useRef<number | null>(null)

  const options = useMemo(() => (mention ? matchingNames(names, mention.query) : []), [mention, names])
  const open = mention !== null && options.length > 0
  const listId = `${id}-mentions`
  const optionId = (i: number) => `${id}-mention-${i}`
  const current = Math.min(active, Math.max(0, options.length - 1))

  useLayoutEffect(() => {
    const caret = caretAfterInsert.current
    if (caret === null || !ref.current) return
    caretAfterInsert.current = null
    ref.current.focus()
    ref.current.setSelectionRange(caret, caret)
    lastCaret.current = caret
  }, [value])

  const track = (text: string, caret: number) => {
    lastCaret.current = caret
    const next = mentionBeforeCaret(text, caret)
    if (next?.query !== mention?.query || next?.start !== mention?.start) setActive(0)
    setMention(next)
  }

  const insert = (name: string) => {
    if (!mention) return
    const token = `${mentionToken(name)} `
    const next = value.slice(0, mention.start) + token + value.slice(mention.end)
    caretAfterInsert.current = mention.start + token.length
    setMention(null)
    onChange(next)
  }

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (!open) return
    if (e.key === "ArrowDown") {
      e.preventDefault()
      setActive((current + 1) % options.length)
    } else if (e.key === "ArrowUp") {
      e.preventDefault()
      setActive((current - 1 + options.length) % options.length)
    } else if (e.key === "Enter") {
      e.preventDefault()
      insert(options[current]!)
    } else if (e.key === "Escape") {
      e.preventDefault()
      e.stopPropagation()
      setMention(null)
    }
  }

  return (
    <div className="mention-field">
      <textarea
        ref={ref}
        id={id}
        rows={rows}
        value={value}
        spellCheck={false}
        aria-autocomplete="list"
        aria-controls={open ? listId : undefined}
        aria-activedescendant={open ? optionId(current) : undefined}
        aria-describedby={describedBy}
        aria-invalid={invalid ? true : undefined}
        onChange={(e) => {
          onChange(e.target.value)
          track(e.target.value, e.target.selectionStart)
        }}
        onSelect={(e) => {
          const caret = e.currentTarget.selectionStart
          // a selection change only (a click, the arrow keys): follow the caret
          if (caret !== lastCaret.current && e.currentTarget.selectionEnd === caret)
            track(e.currentTarget.value, caret)
        }}
        onKeyDown={onKeyDown}
        onBlur={() => setMention(null)}
      />
      {open && (
        <div role="listbox" id={listId} aria-label="Agents to mention" className="mention-list">
          {options.map((name, i) => (
            <div
              key={name}
              role="option"
              id={optionId(i)}
              tabIndex={-1}
              aria-selected={i === current}
              className="mention-option"
              onMouseDown={(e) => {
                // keep the focus in the textarea
                e.preventDefault()
                insert(name)
              }}
              onMouseEnter={() => setActive(i)}
            >
              {name}
            </div>
          ))}
        </div>
      )}
      <span className="visually-hidden" role="status">
        {open ? `${options.length} matching agent${options.length === 1 ? "" : "s"}: Enter inserts one` : ""}
      </span>
    </div>
  )
}
