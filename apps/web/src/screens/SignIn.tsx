import type { Session } from "@dxs/domain/Records"
import { type FormEvent, useState } from "react"
import { api, errorMessage } from "../api.ts"
import { ErrorAlert } from "../components.tsx"
import { useTitle } from "../router.tsx"

/** `/sign-in`: e-mail and password; on success the application goes to `/`. */
export function SignInScreen({ onSignedIn }: { readonly onSignedIn: (session: Session) => void }) {
  useTitle("Sign in")
  const [email, setEmail] = useState("")
  const [password, setPassword] = useState("")
  const [error, setError] = useState<string | undefined>(undefined)
  const [busy, setBusy] = useState(false)

  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault()
    setBusy(true)
    setError(undefined)
    try {
      const session = await api.post<Session>("/auth/sign-in/", { email: email.trim(), password })
      onSignedIn(session)
    } catch (err) {
      setError(errorMessage(err))
      setBusy(false)
    }
  }

  return (
    <main className="page narrow sign-in">
      <h1>Sign in to dxs</h1>
      <form className="card stack" onSubmit={submit}>
        <div className="field">
          <label htmlFor="sign-in-email">E-mail</label>
          <input
            id="sign-in-email"
            type="email"
            name="email"
            autoComplete="username"
            required
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="sign-in-password">Password</label>
          <input
            id="sign-in-password"
            type="password"
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </div>
        <ErrorAlert message={error} />
        <div>
          <button type="submit" disabled={busy}>
            Sign in
          </button>
        </div>
      </form>
    </main>
  )
}
