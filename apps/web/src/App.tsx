/**
 * The application shell: the route tree (TanStack Router), the session loaded first (401 → /sign-in),
 * then the screen of the path under the header of signed-in pages.
 */

import type { Session } from "@dxs/domain/Records"
import { queryOptions, useQuery } from "@tanstack/react-query"
import {
  createRootRoute,
  createRoute,
  createRouter,
  Outlet,
  RouterProvider,
  useParams,
} from "@tanstack/react-router"
import { useEffect, useState } from "react"
import { api, errorMessage, isApiError, setCsrfToken, setUnauthorizedHandler } from "./api.ts"
import { ErrorAlert } from "./components.tsx"
import { queryClient } from "./query.ts"
import {
  bindRouter,
  Link,
  navigate,
  useHeadingFocus,
  usePath,
  useScrollOnNavigation,
  useTitle,
} from "./router.tsx"
import { DeveloperScreen } from "./screens/Developer.tsx"
import { DocumentViewerScreen } from "./screens/DocumentViewer.tsx"
import { OutputSchemaScreen } from "./screens/OutputSchema.tsx"
import { ProjectScreen } from "./screens/Project.tsx"
import { ProjectsScreen } from "./screens/Projects.tsx"
import { ResultDetailScreen } from "./screens/ResultDetail.tsx"
import { ReviewScreen } from "./screens/Review.tsx"
import { RunChangesScreen } from "./screens/RunChanges.tsx"
import { SignInScreen } from "./screens/SignIn.tsx"

const SIGN_IN = "/sign-in"

/** The member's session: null when signed out (the API answered 401). */
const sessionQuery = queryOptions({
  queryKey: ["session"] as const,
  queryFn: async (): Promise<Session | null> => {
    try {
      const s = await api.get<Session>("/auth/session/")
      setCsrfToken(s.csrf_token)
      return s
    } catch (e) {
      if (isApiError(e) && e.status === 401) return null
      throw e
    }
  },
  staleTime: Number.POSITIVE_INFINITY,
})

/** Signed out (or the session expired): forget the session and everything read with it. */
const signedOut = () => {
  setCsrfToken(null)
  queryClient.removeQueries({ queryKey: ["api"] })
  queryClient.setQueryData(sessionQuery.queryKey, null)
}

function Shell() {
  const path = usePath()
  const session = useQuery(sessionQuery)
  useHeadingFocus()
  useScrollOnNavigation()

  useEffect(() => {
    setUnauthorizedHandler(signedOut)
    return () => setUnauthorizedHandler(null)
  }, [])

  // signed out: every page but the sign-in page goes there
  useEffect(() => {
    if (session.data === null && path !== SIGN_IN) navigate(SIGN_IN, { replace: true })
  }, [session.data, path])

  if (path === SIGN_IN) return <Outlet />

  if (session.error)
    return (
      <main className="page narrow">
        <h1>dxs</h1>
        <ErrorAlert message={errorMessage(session.error)} />
        <button type="button" onClick={() => void session.refetch()}>
          Try again
        </button>
      </main>
    )

  if (!session.data)
    return (
      <main className="page">
        <p className="muted">Loading…</p>
      </main>
    )

  return (
    <>
      {/* biome-ignore lint/a11y/useValidAnchor: an in-page link to the main content; it moves the focus there without a history entry */}
      <a
        href="#main"
        className="skip-link"
        onClick={(e) => {
          e.preventDefault()
          const main = document.getElementById("main")
          main?.focus()
          main?.scrollIntoView()
        }}
      >
        Skip to main content
      </a>
      <Header email={session.data.member.email} path={path} />
      <main className="page" id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </>
  )
}

function SignInRoute() {
  return (
    <SignInScreen
      onSignedIn={(s) => {
        setCsrfToken(s.csrf_token)
        queryClient.setQueryData(sessionQuery.queryKey, s)
        navigate("/")
      }}
    />
  )
}

function ProjectRoute() {
  const { projectId } = useParams({ strict: false }) as { projectId: string }
  return <ProjectScreen key={projectId} projectId={projectId} />
}

function SchemaRoute() {
  const { projectId } = useParams({ strict: false }) as { projectId: string }
  return <OutputSchemaScreen key={projectId} projectId={projectId} />
}

function DocumentRoute() {
  const { projectId, documentId } = useParams({ strict: false }) as {
    projectId: string
    documentId: string
  }
  return (
    <DocumentViewerScreen key={`${projectId}/${documentId}`} projectId={projectId} documentId={documentId} />
  )
}

function ReviewRoute() {
  const { projectId, documentId } = useParams({ strict: false }) as {
    projectId: string
    documentId: string
  }
  return <ReviewScreen key={`${projectId}/${documentId}`} projectId={projectId} documentId={documentId} />
}

function ResultRoute() {
  const { projectId, agentId, resultId } = useParams({ strict: false }) as {
    projectId: string
    agentId: string
    resultId: string
  }
  return (
    <ResultDetailScreen
      key={`${projectId}/${resultId}`}
      projectId={projectId}
      agentId={agentId}
      resultId={resultId}
    />
  )
}

function RunChangesRoute() {
  const { projectId, runNumber } = useParams({ strict: false }) as { projectId: string; runNumber: string }
  return <RunChangesScreen key={`${projectId}/${runNumber}`} projectId={projectId} runNumber={runNumber} />
}

const rootRoute = createRootRoute({ component: Shell, notFoundComponent: NotFound })

export const routeTree = rootRoute.addChildren([
  createRoute({ getParentRoute: () => rootRoute, path: "/sign-in", component: SignInRoute }),
  createRoute({ getParentRoute: () => rootRoute, path: "/", component: ProjectsScreen }),
  createRoute({ getParentRoute: () => rootRoute, path: "/developer", component: DeveloperScreen }),
  createRoute({ getParentRoute: () => rootRoute, path: "/projects/$projectId", component: ProjectRoute }),
  createRoute({
    getParentRoute: () => rootRoute,
    path: "/projects/$projectId/schema",
    component: SchemaRoute,
  }),
  createRoute({
    getParentRoute: () => rootRoute,
    path: "/projects/$projectId/documents/$documentId",
    component: DocumentRoute,
  }),
  createRoute({
    getParentRoute: () => rootRoute,
    path: "/projects/$projectId/documents/$documentId/review",
    component: ReviewRoute,
  }),
  createRoute({
    getParentRoute: () => rootRoute,
    path: "/projects/$projectId/runs/$runNumber/changes",
    component: RunChangesRoute,
  }),
  createRoute({
    getParentRoute: () => rootRoute,
    path: "/projects/$projectId/agents/$agentId/$resultId",
    component: ResultRoute,
  }),
])

export const router = createRouter({
  routeTree,
  defaultNotFoundComponent: NotFound,
  // the scroll is the application's (useScrollOnNavigation): the router's reset to the top is off
  scrollRestoration: () => false,
})
bindRouter(router)

export function App() {
  return <RouterProvider router={router} />
}

function Header({ email, path }: { readonly email: string; readonly path: string }) {
  const [busy, setBusy] = useState(false)
  const signOut = async () => {
    try {
      await api.post("/auth/sign-out/")
    } catch {
      // the session is gone either way
    }
    signedOut()
    navigate(SIGN_IN)
  }
  return (
    <header className="app-header">
      <nav aria-label="Main" className="app-nav">
        <Link href="/" className="brand" aria-current={path === "/" ? "page" : undefined}>
          dxs
        </Link>
        <Link href="/developer" aria-current={path === "/developer" ? "page" : undefined}>
          Developer
        </Link>
      </nav>
      <div className="account">
        <span className="member-email">{email}</span>
        <button
          type="button"
          className="secondary"
          disabled={busy}
          onClick={() => {
            setBusy(true)
            void signOut().finally(() => setBusy(false))
          }}
        >
          Sign out
        </button>
      </div>
    </header>
  )
}

function NotFound() {
  useTitle("Page not found")
  return (
    <>
      <h1>Page not found</h1>
      <p>
        There is nothing at this address. <Link href="/">Go to the projects</Link>.
      </p>
    </>
  )
}
