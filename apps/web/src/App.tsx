/**
 * The application shell: loads the session first (401 → /sign-in), then shows the screen of the path
 * under the header of signed-in pages.
 */

import type { Session } from "@dxs/domain/Records"
import { type ReactNode, useCallback, useEffect, useState } from "react"
import { ApiError, api, errorMessage, setCsrfToken, setUnauthorizedHandler } from "./api.ts"
import { ErrorAlert } from "./components.tsx"
import { Link, matchPath, navigate, usePath, useTitle } from "./router.tsx"
import { DeveloperScreen } from "./screens/Developer.tsx"
import { DocumentViewerScreen } from "./screens/DocumentViewer.tsx"
import { OutputSchemaScreen } from "./screens/OutputSchema.tsx"
import { ProjectScreen } from "./screens/Project.tsx"
import { ProjectsScreen } from "./screens/Projects.tsx"
import { ResultDetailScreen } from "./screens/ResultDetail.tsx"
import { SignInScreen } from "./screens/SignIn.tsx"

const SIGN_IN = "/sign-in"

export function App() {
  const path = usePath()
  // undefined: not known yet; null: signed out
  const [session, setSession] = useState<Session | null | undefined>(undefined)
  const [loadError, setLoadError] = useState<string | undefined>(undefined)

  const loadSession = useCallback(async () => {
    setLoadError(undefined)
    try {
      const s = await api.get<Session>("/auth/session/")
      setCsrfToken(s.csrf_token)
      setSession(s)
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) setSession(null)
      else setLoadError(errorMessage(e))
    }
  }, [])

  useEffect(() => {
    setUnauthorizedHandler(() => {
      setCsrfToken(null)
      setSession(null)
    })
    void loadSession()
    return () => setUnauthorizedHandler(null)
  }, [loadSession])

  // signed out (or the session expired): every page but the sign-in page goes there
  useEffect(() => {
    if (session === null && path !== SIGN_IN) navigate(SIGN_IN, { replace: true })
  }, [session, path])

  const signedIn = (s: Session) => {
    setCsrfToken(s.csrf_token)
    setSession(s)
    navigate("/")
  }

  const signOut = async () => {
    try {
      await api.post("/auth/sign-out/")
    } catch {
      // the session is gone either way
    }
    setCsrfToken(null)
    setSession(null)
    navigate(SIGN_IN)
  }

  if (path === SIGN_IN) return <SignInScreen onSignedIn={signedIn} />

  if (loadError)
    return (
      <main className="page narrow">
        <h1>dxs</h1>
        <ErrorAlert message={loadError} />
        <button type="button" onClick={() => void loadSession()}>
          Try again
        </button>
      </main>
    )

  if (!session)
    return (
      <main className="page">
        <p className="muted">Loading…</p>
      </main>
    )

  return (
    <>
      <Header email={session.member.email} path={path} onSignOut={signOut} />
      <main className="page" id="main">
        {screenFor(path)}
      </main>
    </>
  )
}

function screenFor(path: string): ReactNode {
  if (path === "/") return <ProjectsScreen />
  if (path === "/developer") return <DeveloperScreen />
  let m = matchPath("/projects/:projectId", path)
  if (m) return <ProjectScreen key={m.projectId} projectId={m.projectId!} />
  m = matchPath("/projects/:projectId/schema", path)
  if (m) return <OutputSchemaScreen key={m.projectId} projectId={m.projectId!} />
  m = matchPath("/projects/:projectId/documents/:documentId", path)
  if (m)
    return (
      <DocumentViewerScreen
        key={`${m.projectId}/${m.documentId}`}
        projectId={m.projectId!}
        documentId={m.documentId!}
      />
    )
  m = matchPath("/projects/:projectId/agents/:agentId/:resultId", path)
  if (m)
    return (
      <ResultDetailScreen
        key={`${m.projectId}/${m.resultId}`}
        projectId={m.projectId!}
        agentId={m.agentId!}
        resultId={m.resultId!}
      />
    )
  return <NotFound />
}

function Header({
  email,
  path,
  onSignOut,
}: {
  readonly email: string
  readonly path: string
  readonly onSignOut: () => Promise<void>
}) {
  const [busy, setBusy] = useState(false)
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
            void onSignOut().finally(() => setBusy(false))
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
