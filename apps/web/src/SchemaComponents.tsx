/**
 * Parts of the output schema screen: the diagnostics table, JSON with `*_service_url` links and the form
 * of the schema's fields.
 */

import type { Diagnostic as MappingDiagnostic } from "@dxs/domain/Records"
import { Fragment, type MouseEvent, type ReactNode } from "react"
import { navigate } from "./router.tsx"
import {
  childPath,
  FIELD_TYPES,
  type FieldType,
  hasChildren,
  type ItemType,
  newField,
  SCALAR_TYPES,
  type SchemaField,
  takesAgent,
} from "./schemaFields.ts"

/** Mapping diagnostics (or a refused request's field errors) as a table captioned "Diagnostics". */
export function DiagnosticsTable({
  diagnostics,
}: {
  readonly diagnostics: ReadonlyArray<MappingDiagnostic>
}) {
  if (diagnostics.length === 0) return <p className="muted">No diagnostics.</p>
  return (
    <div className="table-wrap">
      <table className="data-table diagnostics" data-testid="schema-diagnostics">
        <caption className="visually-hidden">Diagnostics</caption>
        <thead>
          <tr>
            <th scope="col">Path</th>
            <th scope="col">Severity</th>
            <th scope="col">Code</th>
            <th scope="col">Message</th>
          </tr>
        </thead>
        <tbody>
          {diagnostics.map((d) => (
            <tr key={`${d.path}\u0000${d.code}\u0000${d.message}`} data-severity={d.severity}>
              <td>{d.path === "" ? <span className="muted">(root)</span> : <code>{d.path}</code>}</td>
              <td>
                <span className={`badge severity-${d.severity}`}>{d.severity}</span>
              </td>
              <td>{d.code ? <code>{d.code}</code> : "—"}</td>
              <td>{d.message}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

const SERVICE_URL_SUFFIX = "_service_url"

/**
 * `value` pretty-printed as `JSON.stringify(value, null, 2)` does, with every string under a
 * `*_service_url` key as a link (its text the URL itself).
 */
export function JsonWithLinks({ value }: { readonly value: unknown }) {
  return <>{renderJson(value, "", undefined, "$")}</>
}

const isPlainObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

function renderJson(value: unknown, indent: string, key: string | undefined, path: string): ReactNode {
  const inner = `${indent}  `
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]"
    const items: Array<ReactNode> = []
    for (let i = 0; i < value.length; i++) {
      const itemPath = `${path}[${i}]`
      items.push(
        <Fragment key={itemPath}>
          {inner}
          {renderJson(value[i], inner, undefined, itemPath)}
          {i < value.length - 1 ? ",\n" : "\n"}
        </Fragment>,
      )
    }
    return (
      <>
        {"[\n"}
        {items}
        {indent}]
      </>
    )
  }
  if (isPlainObject(value)) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined)
    if (entries.length === 0) return "{}"
    return (
      <>
        {"{\n"}
        {entries.map(([k, v], i) => (
          <Fragment key={k}>
            {inner}
            {JSON.stringify(k)}: {renderJson(v, inner, k, `${path}.${k}`)}
            {i < entries.length - 1 ? ",\n" : "\n"}
          </Fragment>
        ))}
        {indent}
        {"}"}
      </>
    )
  }
  if (typeof value === "string" && key?.endsWith(SERVICE_URL_SUFFIX))
    return (
      <>
        {'"'}
        <ServiceLink url={value} />
        {'"'}
      </>
    )
  return JSON.stringify(value) ?? "null"
}

/** This origin's path of `url` when it is a page of this application under `/projects/`, else undefined. */
const localProjectPath = (url: string): string | undefined => {
  try {
    const u = new URL(url, window.location.href)
    if (u.origin !== window.location.origin || !u.pathname.startsWith("/projects/")) return undefined
    return u.pathname + u.search + u.hash
  } catch {
    return undefined
  }
}

/** A deep link into the application: navigates on the client when it points to this origin's project pages. */
function ServiceLink({ url }: { readonly url: string }) {
  const local = localProjectPath(url)
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (local === undefined || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
    e.preventDefault()
    navigate(local)
  }
  return (
    <a href={url} onClick={onClick} className="service-url">
      {url}
    </a>
  )
}

// ---------------------------------------------------------------------------------------------------------
// The schema's fields as a form

const TYPE_LABEL: Record<FieldType, string> = {
  string: "text (string)",
  number: "number",
  integer: "whole number (integer)",
  boolean: "yes/no (boolean)",
  object: "object (nested fields)",
  array: "list (array)",
}

export interface SchemaFieldsFormProps {
  readonly fields: ReadonlyArray<SchemaField>
  readonly onChange: (fields: ReadonlyArray<SchemaField>) => void
  /** The project's agent names, to map leaves to. */
  readonly agents: ReadonlyArray<string>
  /** The project's dimension names, for arrays (one item per value). */
  readonly dimensions: ReadonlyArray<string>
  /** The diagnostics to show at their fields (by path). */
  readonly diagnostics: ReadonlyArray<MappingDiagnostic>
  /** Why agents and dimensions cannot be chosen here (automatic mapping, a mapping the form cannot show). */
  readonly mappingLocked: string | undefined
  /** The form is behind the JSON (which does not parse, or uses what the form does not edit): read only. */
  readonly disabled?: boolean
}

/** Fields of the schema (name, type, description, required, nested fields), each leaf mapped to an agent. */
export function SchemaFieldsForm(props: SchemaFieldsFormProps) {
  const { fields, onChange } = props
  return (
    <fieldset className="schema-fields" data-testid="schema-fields" disabled={props.disabled === true}>
      <legend className="visually-hidden">Fields of the schema</legend>
      {props.mappingLocked && <p className="muted small hint">{props.mappingLocked}</p>}
      {fields.length === 0 && <p className="muted">No fields yet.</p>}
      <FieldList
        {...props}
        fields={fields}
        onChange={onChange}
        parentPath=""
        parentIsArray={false}
        prefix=""
      />
      <button
        type="button"
        className="secondary small-button"
        onClick={() => onChange([...fields, newField()])}
      >
        Add field
      </button>
    </fieldset>
  )
}

function FieldList(
  props: SchemaFieldsFormProps & {
    readonly parentPath: string
    readonly parentIsArray: boolean
    readonly prefix: string
  },
) {
  const { fields, onChange } = props
  return (
    <>
      {fields.map((f, i) => (
        <FieldEditor
          key={f.id}
          {...props}
          field={f}
          label={`${props.prefix}${i + 1}`}
          path={childPath(props.parentPath, f, props.parentIsArray)}
          onField={(next) =>
            onChange(
              next === null
                ? fields.filter((x) => x.id !== f.id)
                : fields.map((x) => (x.id === f.id ? next : x)),
            )
          }
        />
      ))}
    </>
  )
}

function FieldEditor({
  field: f,
  label,
  path,
  onField,
  ...props
}: SchemaFieldsFormProps & {
  readonly field: SchemaField
  readonly label: string
  readonly path: string
  readonly onField: (field: SchemaField | null) => void
}) {
  const id = `schema-field-${f.id}`
  const set = (patch: Partial<SchemaField>) => onField({ ...f, ...patch })
  const here = f.name === "" ? [] : props.diagnostics.filter((d) => d.path === path)
  const diagnosticsId = `${id}-diagnostics`
  const of = <VisuallyHiddenText>{` of field ${label}`}</VisuallyHiddenText>
  const agentOptions =
    f.agent !== "" && !props.agents.includes(f.agent) ? [...props.agents, f.agent] : props.agents
  const dimensionOptions =
    f.dimension !== "" && !props.dimensions.includes(f.dimension)
      ? [...props.dimensions, f.dimension]
      : props.dimensions
  const locked = props.mappingLocked !== undefined
  return (
    <fieldset className="schema-field" data-path={path} data-field-label={label}>
      <legend>Field {label}</legend>
      <div className="schema-field-row">
        <div className="field">
          <label htmlFor={`${id}-name`}>Name{of}</label>
          <input
            id={`${id}-name`}
            value={f.name}
            required
            autoComplete="off"
            spellCheck={false}
            aria-invalid={here.some((d) => d.severity === "error") ? true : undefined}
            aria-describedby={here.length > 0 ? diagnosticsId : undefined}
            onChange={(e) => set({ name: e.target.value })}
          />
        </div>
        <div className="field">
          <label htmlFor={`${id}-type`}>Type{of}</label>
          <select
            id={`${id}-type`}
            value={f.type}
            onChange={(e) => set({ type: e.target.value as FieldType, agent: "", dimension: "" })}
          >
            {FIELD_TYPES.map((t) => (
              <option key={t} value={t}>
                {TYPE_LABEL[t]}
              </option>
            ))}
          </select>
        </div>
        {f.type === "array" && (
          <div className="field">
            <label htmlFor={`${id}-items`}>Item type{of}</label>
            <select
              id={`${id}-items`}
              value={f.itemType}
              onChange={(e) => set({ itemType: e.target.value as ItemType, agent: "" })}
            >
              {[...SCALAR_TYPES, "object" as const].map((t) => (
                <option key={t} value={t}>
                  {TYPE_LABEL[t]}
                </option>
              ))}
            </select>
          </div>
        )}
        <div className="checkbox-field schema-required">
          <input
            id={`${id}-required`}
            type="checkbox"
            checked={f.required}
            onChange={(e) => set({ required: e.target.checked })}
          />
          <label htmlFor={`${id}-required`}>Required{of}</label>
        </div>
      </div>
      <div className="field">
        <label htmlFor={`${id}-description`}>Description{of}</label>
        <input
          id={`${id}-description`}
          value={f.description}
          onChange={(e) => set({ description: e.target.value })}
        />
      </div>
      <FieldMapping
        field={f}
        id={id}
        of={of}
        locked={locked}
        agents={agentOptions}
        dimensions={dimensionOptions}
        set={set}
      />
      {here.length > 0 && (
        <ul className="field-diagnostics" id={diagnosticsId} data-testid="field-diagnostics">
          {here.map((d) => (
            <li key={`${d.code}\u0000${d.message}`} className={`severity-${d.severity}`}>
              <span className={`badge severity-${d.severity}`}>{d.severity}</span>{" "}
              {d.code && <code>{d.code}</code>} {d.message}
            </li>
          ))}
        </ul>
      )}
      {hasChildren(f) && (
        <div className="schema-children">
          <FieldList
            {...props}
            fields={f.children}
            onChange={(children) => set({ children })}
            parentPath={path}
            parentIsArray={f.type === "array"}
            prefix={`${label}.`}
          />
          <button
            type="button"
            className="secondary small-button"
            onClick={() => set({ children: [...f.children, newField()] })}
          >
            Add nested field<VisuallyHiddenText>{` to field ${label}`}</VisuallyHiddenText>
          </button>
        </div>
      )}
      <div className="field-actions">
        <button type="button" className="quiet danger-text small-button" onClick={() => onField(null)}>
          Remove<VisuallyHiddenText>{` field ${label}`}</VisuallyHiddenText>
        </button>
      </div>
    </fieldset>
  )
}

/** The dimension of an array field and the agent of a field that takes one (the mapping's side). */
function FieldMapping({
  field,
  id,
  of,
  locked,
  agents,
  dimensions,
  set,
}: {
  readonly field: SchemaField
  readonly id: string
  readonly of: ReactNode
  readonly locked: boolean
  readonly agents: ReadonlyArray<string>
  readonly dimensions: ReadonlyArray<string>
  readonly set: (patch: Partial<SchemaField>) => void
}) {
  return (
    <div className="schema-field-row">
      {field.type === "array" && (
        <div className="field">
          <label htmlFor={`${id}-dimension`}>One item per value of{of}</label>
          <select
            id={`${id}-dimension`}
            value={field.dimension}
            disabled={locked}
            onChange={(e) => set({ dimension: e.target.value })}
          >
            <option value="">(no dimension: not mapped)</option>
            {dimensions.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </div>
      )}
      {takesAgent(field) && (
        <div className="field">
          <label htmlFor={`${id}-agent`}>Agent{of}</label>
          <select
            id={`${id}-agent`}
            value={field.agent}
            disabled={locked}
            onChange={(e) => set({ agent: e.target.value })}
          >
            <option value="">(not mapped)</option>
            {agents.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </div>
      )}
    </div>
  )
}

function VisuallyHiddenText({ children }: { readonly children: string }) {
  return <span className="visually-hidden">{children}</span>
}
