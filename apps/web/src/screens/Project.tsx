import type { Agent, Dimension, Project } from "@dxs/domain/Records"
import { type KeyboardEvent, useEffect, useRef, useState } from "react"
import { seg } from "../api.ts"
import { ErrorAlert, Loading } from "../components.tsx"
import { invalidateApi, queryClient, useApiQuery } from "../query.ts"
import {
  Link,
  replaceQuery,
  scrollToRestore,
  useQueryString,
  useRememberProjectHref,
  useTitle,
} from "../router.tsx"
import { AgentsSection, REFUSAL, useLaunch } from "./AgentsSection.tsx"
import { DimensionsSection } from "./DimensionsSection.tsx"
import { DocumentsSection } from "./DocumentsSection.tsx"
import { FileEditPanel } from "./FileEditPanel.tsx"
import { ResultsGrid } from "./ResultsGrid.tsx"
import { StartReview } from "./Review.tsx"
import { RunHistory } from "./Runs.tsx"

/** The project screen's sections, in page order: each in the section nav, the one chosen in the URL (`?section=`). */
const SECTIONS = [
  { key: "documents", label: "Documents" },
  { key: "dimensions", label: "Dimensions" },
  { key: "agents", label: "Agents" },
  { key: "runs", label: "Runs" },
  { key: "results", label: "Results" },
  { key: "file-edit", label: "File edit" },
] as const
type SectionKey = (typeof SECTIONS)[number]["key"]

const sectionId = (key: string) => `section-${key}`
const isSection = (key: string | null): key is SectionKey => SECTIONS.some((s) => s.key === key)

/** Bring a section into view and its heading into focus (where screen readers continue). */
const showSection = (key: SectionKey, behavior: ScrollBehavior = "smooth") => {
  const panel = document.getElementById(sectionId(key))
  if (panel === null) return
  panel.scrollIntoView({ block: "start", behavior })
  const heading = panel.querySelector<HTMLElement>("h2")
  if (heading) {
    if (!heading.hasAttribute("tabindex")) heading.setAttribute("tabindex", "-1")
    heading.focus({ preventScroll: true })
  }
}

/**
 * `/projects/:id` as a workspace: a sticky nav of its sections (documents, dimensions, agents, runs,
 * results, file edit), the chosen one in the URL; the results grid keeps its state in the URL too, so that
 * Back from a result shows the same grid at the same place.
 */
export function ProjectScreen({ projectId }: { readonly projectId: string }) {
  const base = `/projects/${seg(projectId)}`
  const project = useApiQuery<Project>(`${base}/`)
  // The Document dimension's values (every document's name) are not needed here: a page of agents, not of documents.
  const agents = useApiQuery<ReadonlyArray<Agent>>(`${base}/agents/?dimension_values=custom`)
  const dimensions = useApiQuery<ReadonlyArray<Dimension>>(`${base}/dimensions/`)
  const refreshResults = () => void invalidateApi(`${base}/results/`)
  const refreshRefusal = () => void queryClient.invalidateQueries({ queryKey: [REFUSAL] })
  const launch = useLaunch(
    base,
    projectId,
    () => {
      refreshResults()
      void agents.reload()
      void invalidateApi(`${base}/documents/`)
    },
    refreshRefusal,
  )
  useTitle(project.data?.name ?? "Project")
  useRememberProjectHref(projectId)
  const section = useQueryString().get("section")
  const ready = project.data !== undefined
  const [restoring] = useState(scrollToRestore)

  // opened at a section (a link, a reload): shown once the page is there, unless going back to a position
  const shown = useRef(false)
  useEffect(() => {
    if (!ready || shown.current) return
    shown.current = true
    if (!restoring && isSection(section)) requestAnimationFrame(() => showSection(section, "auto"))
  }, [ready, restoring, section])

  if (project.data === undefined)
    return project.error ? (
      <>
        <h1>Project not found</h1>
        <ErrorAlert message={project.error} />
        <p>
          <Link href="/">Back to the projects</Link>
        </p>
      </>
    ) : (
      <Loading what="the project" />
    )

  const select = (key: SectionKey) => {
    const query = new URLSearchParams(window.location.search)
    query.set("section", key)
    replaceQuery(query)
    showSection(key)
  }

  return (
    <>
      <div className="heading-row">
        <h1>{project.data.name}</h1>
        <Link href={`${base}/schema`} className="heading-link">
          Output schema
        </Link>
        <StartReview projectId={projectId} />
      </div>
      {project.data.description && <p className="lead">{project.data.description}</p>}
      <SectionNav selected={isSection(section) ? section : null} onSelect={select} />
      <div id={sectionId("documents")}>
        <DocumentsSection base={base} onChanged={refreshRefusal} />
      </div>
      <div id={sectionId("dimensions")}>
        <DimensionsSection base={base} dimensions={dimensions} />
      </div>
      <div id={sectionId("agents")}>
        <AgentsSection
          base={base}
          agents={agents}
          dimensions={dimensions.data}
          launch={launch}
          onRefusalChanged={refreshRefusal}
          onAgentsChanged={refreshResults}
        />
      </div>
      <div id={sectionId("runs")}>
        <RunHistory
          base={base}
          runs={launch.tracker.runs}
          count={launch.tracker.runCount}
          error={launch.tracker.runsError}
          agents={agents.data}
        />
      </div>
      <div id={sectionId("results")}>
        <ResultsGrid projectId={projectId} />
      </div>
      <div id={sectionId("file-edit")}>
        <FileEditPanel base={base} />
      </div>
    </>
  )
}

/**
 * The sections of the project as a sticky nav of in-page links: Tab reaches it, the arrow keys (and Home,
 * End) move between its links, Enter goes to a section (kept in the URL) and puts the focus on its heading.
 */
function SectionNav({
  selected,
  onSelect,
}: {
  readonly selected: SectionKey | null
  readonly onSelect: (key: SectionKey) => void
}) {
  const links = useRef<Array<HTMLAnchorElement | null>>([])
  const onKey = (e: KeyboardEvent<HTMLAnchorElement>, i: number) => {
    const last = SECTIONS.length - 1
    const to =
      e.key === "ArrowRight" || e.key === "ArrowDown"
        ? i === last
          ? 0
          : i + 1
        : e.key === "ArrowLeft" || e.key === "ArrowUp"
          ? i === 0
            ? last
            : i - 1
          : e.key === "Home"
            ? 0
            : e.key === "End"
              ? last
              : null
    if (to === null) return
    e.preventDefault()
    links.current[to]?.focus()
  }
  return (
    <nav aria-label="Project sections" className="section-nav" data-testid="section-nav">
      <ul>
        {SECTIONS.map((s, i) => (
          <li key={s.key}>
            <a
              href={`?section=${s.key}`}
              ref={(el) => {
                links.current[i] = el
              }}
              aria-current={selected === s.key ? "location" : undefined}
              onKeyDown={(e) => onKey(e, i)}
              onClick={(e) => {
                if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return
                e.preventDefault()
                onSelect(s.key)
              }}
            >
              {s.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  )
}
