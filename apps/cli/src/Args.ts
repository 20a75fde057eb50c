// Why not @effect/cli (0.77.2 is the release that fits our Effect pins): its help is a generated page of its own
// layout, it adds options of its own (--version, --wizard, --completions, --log-level), and its usage errors
// carry its own wording ("Invalid subcommand for dxs - use one of …", "Expected to find option: '--org'").
// Keeping the documented help, messages and exit code 2 would mean translating every one of its results back,
// in more code than this parser; and loading it costs `dxs --help` about a quarter more CPU time.
import { parseArgs } from "node:util"
import { type ContentFormat, contentFormats } from "@dxs/domain/Content"

/** What the command line asks for. Parsing is pure: main.ts does the printing and exiting. */
export type Command =
  | { readonly _tag: "Help"; readonly text: string }
  | { readonly _tag: "UsageError"; readonly message: string; readonly usage: string }
  | { readonly _tag: "Start"; readonly mode: StartMode }
  | { readonly _tag: "Migrate" }
  | { readonly _tag: "GraphqlSchema" }
  | { readonly _tag: "KeysCreate"; readonly org: string; readonly name: string }
  | { readonly _tag: "KeysList"; readonly org: string | undefined; readonly json: boolean }
  | { readonly _tag: "KeysRevoke"; readonly target: string }
  | { readonly _tag: "UsersCreate"; readonly org: string; readonly email: string }
  | { readonly _tag: "UsersList"; readonly org: string | undefined; readonly json: boolean }
  | {
      readonly _tag: "Parse"
      readonly files: ReadonlyArray<string>
      readonly format: ContentFormat
      readonly out: string | undefined
    }

export type StartMode = "all" | "api" | "worker" | "graphql"

const ENV_HINT =
  "Configuration comes from environment variables (PORT, DATA_DIR, DATABASE_URL, …; see README.md)."

export const usage = {
  main: `Usage: dxs <command> [options]

Commands:
  start [all|api|worker|graphql]
                                Run the service (default all: REST API, GraphQL and worker in one process)
  migrate                       Bring the database schema up to date
  graphql schema                Print the GraphQL schema (SDL)
  keys create --org NAME        Create an API key (printed once, as the last line of output)
  keys list [--org NAME]        List API keys (never the keys themselves)
  keys revoke ID_OR_KEY         Revoke an API key
  users create --org NAME --email ADDRESS
                                Create a web application member (password from stdin, or generated)
  users list [--org NAME]       List members (never their passwords)
  parse FILE… [--format F] [--out DIR]
                                Convert documents to Markdown, JSON or text, offline (no server needed)

Options:
  -h, --help                    Show help (also after any command: dxs keys create --help)

${ENV_HINT}
`,
  start: `Usage: dxs start [all|api|worker|graphql]

  all      REST API on HOST:PORT, GraphQL on HOST:GRAPHQL_PORT and a worker, in one process (default)
  api      only the REST API
  worker   only the worker (run as many as you like against one DATABASE_URL)
  graphql  only the GraphQL gateway, at http://HOST:GRAPHQL_PORT/graphql

Without DATABASE_URL, the embedded PostgreSQL server of DATA_DIR is started (or shared with the dxs
process already running it) and stopped on SIGINT/SIGTERM. Migrations run first.

Options:
  -h, --help  Show this help

${ENV_HINT}
`,
  migrate: `Usage: dxs migrate

Applies pending database migrations (safe while other dxs processes run) and prints their names.

Options:
  -h, --help  Show this help

${ENV_HINT}
`,
  graphql: `Usage: dxs graphql schema

Prints the GraphQL gateway's schema (SDL) on standard output. Needs no database.

Options:
  -h, --help  Show this help
`,
  keys: `Usage: dxs keys <create|list|revoke> [options]

  keys create --org NAME [--name LABEL]   Create a key for an organisation (created if new)
  keys list [--org NAME] [--json]         List keys: id, organisation, label, prefix, dates
  keys revoke ID_OR_KEY                   Revoke a key by its id or by the key itself

Works whether or not the server is running (same DATA_DIR or DATABASE_URL).
`,
  keysCreate: `Usage: dxs keys create --org NAME [--name LABEL]

Creates an API key for organisation NAME (creating the organisation if it is new). The key is
printed once, alone on the last line of standard output; only its SHA-256 is stored.

Options:
  --org NAME     Organisation (required)
  --name LABEL   A label to recognise the key by (optional)
  -h, --help     Show this help
`,
  keysList: `Usage: dxs keys list [--org NAME] [--json]

Lists API keys with their id, organisation, label, prefix, creation, last use and revocation.

Options:
  --org NAME   Only this organisation's keys
  --json       Print JSON instead of a table
  -h, --help   Show this help
`,
  keysRevoke: `Usage: dxs keys revoke ID_OR_KEY

Revokes the key with this id (from dxs keys list) or the key itself. Fails when no active key matches.

Options:
  -h, --help  Show this help
`,
  users: `Usage: dxs users <create|list> [options]

  users create --org NAME --email ADDRESS   Create a member of an organisation (created if new)
  users list [--org NAME] [--json]          List members: id, organisation, e-mail, creation date

Members sign in to the web application with their e-mail address and password.
Works whether or not the server is running (same DATA_DIR or DATABASE_URL).
`,
  usersCreate: `Usage: dxs users create --org NAME --email ADDRESS

Creates a member of organisation NAME (creating the organisation if it is new), who signs in to the
web application with ADDRESS and a password of at least 12 characters. E-mail addresses are unique
across organisations, ignoring case. Only a hash (scrypt) of the password is stored.

The password:
  - when standard input is not a terminal, its first line (without the line ending), e.g.
      printf '%s\\n' "$PASSWORD" | dxs users create --org acme --email ada@example.com
  - when standard input is a terminal, a random one (20 letters and digits) is generated and printed
    once, alone on the last line of standard output

Options:
  --org NAME        Organisation (required)
  --email ADDRESS   The member's e-mail address (required)
  -h, --help        Show this help
`,
  usersList: `Usage: dxs users list [--org NAME] [--json]

Lists members with their id, organisation, e-mail address and creation date (never their passwords).

Options:
  --org NAME   Only this organisation's members
  --json       Print JSON instead of a table
  -h, --help   Show this help
`,
  parse: `Usage: dxs parse FILE… [--format markdown|json|text] [--out DIR]

Reads each file as an upload is read (every supported format; pages, tables, reading order) and
writes its content: Markdown (default: headings, paragraphs, lists, GitHub tables), a JSON document
(pages → blocks with their kind, page and box) or the page text. An e-mail's attachments follow it.
Works offline: no server, no database. Parse limits come from PARSE_TIMEOUT_SECONDS, PARSE_MEMORY_MB,
MAX_PAGES, MAX_DECOMPRESSED_BYTES and PDF_ENGINE.

Without --out the content goes to standard output (several files: each after a line "==> FILE <==",
or for JSON one array). With --out, one file per input in DIR (created if needed): NAME.md, NAME.json
or NAME.txt. Exit code 1 when a file could not be read (the others are still written).

Options:
  -f, --format F   markdown, json or text (default markdown)
  -o, --out DIR    Write the results into DIR instead of standard output
  -h, --help       Show this help
`,
} as const

const help = { type: "boolean", short: "h" } as const

const parse = <O extends Record<string, { type: "string" | "boolean"; short?: string }>>(
  args: ReadonlyArray<string>,
  options: O,
) => parseArgs({ args: [...args], options: { ...options, help }, allowPositionals: true, strict: true })

const bad = (message: string, text: string): Command => ({ _tag: "UsageError", message, usage: text })

const isHelp = (arg: string | undefined) => arg === "-h" || arg === "--help" || arg === "help"

const startCommand = (args: ReadonlyArray<string>): Command => {
  const { values, positionals } = parse(args, {})
  if (values.help) return { _tag: "Help", text: usage.start }
  if (positionals.length > 1) return bad(`unexpected argument '${positionals[1]}'`, usage.start)
  const mode = positionals[0] ?? "all"
  if (mode !== "all" && mode !== "api" && mode !== "worker" && mode !== "graphql") {
    return bad(`unknown mode '${mode}' (expected all, api, worker or graphql)`, usage.start)
  }
  return { _tag: "Start", mode }
}

const migrateCommand = (args: ReadonlyArray<string>): Command => {
  const { values, positionals } = parse(args, {})
  if (values.help) return { _tag: "Help", text: usage.migrate }
  if (positionals.length > 0) return bad(`unexpected argument '${positionals[0]}'`, usage.migrate)
  return { _tag: "Migrate" }
}

const graphqlCommand = (args: ReadonlyArray<string>): Command => {
  const { values, positionals } = parse(args, {})
  if (values.help) return { _tag: "Help", text: usage.graphql }
  if (positionals[0] === undefined) return bad("missing graphql command (schema)", usage.graphql)
  if (positionals[0] !== "schema") return bad(`unknown graphql command '${positionals[0]}'`, usage.graphql)
  if (positionals.length > 1) return bad(`unexpected argument '${positionals[1]}'`, usage.graphql)
  return { _tag: "GraphqlSchema" }
}

const keysCommand = (args: ReadonlyArray<string>): Command => {
  const [sub, ...rest] = args
  if (sub === undefined) return bad("missing keys command (create, list or revoke)", usage.keys)
  if (isHelp(sub)) return { _tag: "Help", text: usage.keys }
  switch (sub) {
    case "create": {
      const { values, positionals } = parse(rest, { org: { type: "string" }, name: { type: "string" } })
      if (values.help) return { _tag: "Help", text: usage.keysCreate }
      if (positionals.length > 0) return bad(`unexpected argument '${positionals[0]}'`, usage.keysCreate)
      const org = values.org?.trim()
      if (!org) return bad("--org NAME is required", usage.keysCreate)
      return { _tag: "KeysCreate", org, name: values.name?.trim() ?? "" }
    }
    case "list": {
      const { values, positionals } = parse(rest, { org: { type: "string" }, json: { type: "boolean" } })
      if (values.help) return { _tag: "Help", text: usage.keysList }
      if (positionals.length > 0) return bad(`unexpected argument '${positionals[0]}'`, usage.keysList)
      return { _tag: "KeysList", org: values.org?.trim() || undefined, json: values.json ?? false }
    }
    case "revoke": {
      const { values, positionals } = parse(rest, {})
      if (values.help) return { _tag: "Help", text: usage.keysRevoke }
      if (positionals.length !== 1) {
        return bad(
          positionals.length === 0 ? "missing ID_OR_KEY" : "expected one ID_OR_KEY",
          usage.keysRevoke,
        )
      }
      return { _tag: "KeysRevoke", target: positionals[0]! }
    }
    default:
      return bad(`unknown keys command '${sub}'`, usage.keys)
  }
}

const usersCommand = (args: ReadonlyArray<string>): Command => {
  const [sub, ...rest] = args
  if (sub === undefined) return bad("missing users command (create or list)", usage.users)
  if (isHelp(sub)) return { _tag: "Help", text: usage.users }
  switch (sub) {
    case "create": {
      const { values, positionals } = parse(rest, { org: { type: "string" }, email: { type: "string" } })
      if (values.help) return { _tag: "Help", text: usage.usersCreate }
      if (positionals.length > 0) return bad(`unexpected argument '${positionals[0]}'`, usage.usersCreate)
      const org = values.org?.trim()
      if (!org) return bad("--org NAME is required", usage.usersCreate)
      const email = values.email?.trim()
      if (!email) return bad("--email ADDRESS is required", usage.usersCreate)
      return { _tag: "UsersCreate", org, email }
    }
    case "list": {
      const { values, positionals } = parse(rest, { org: { type: "string" }, json: { type: "boolean" } })
      if (values.help) return { _tag: "Help", text: usage.usersList }
      if (positionals.length > 0) return bad(`unexpected argument '${positionals[0]}'`, usage.usersList)
      return { _tag: "UsersList", org: values.org?.trim() || undefined, json: values.json ?? false }
    }
    default:
      return bad(`unknown users command '${sub}'`, usage.users)
  }
}

const parseFilesCommand = (args: ReadonlyArray<string>): Command => {
  const { values, positionals } = parse(args, {
    format: { type: "string", short: "f" },
    out: { type: "string", short: "o" },
  })
  if (values.help) return { _tag: "Help", text: usage.parse }
  if (positionals.length === 0) return bad("missing FILE", usage.parse)
  const format = (values.format ?? "markdown").toLowerCase()
  if (!(contentFormats as ReadonlyArray<string>).includes(format))
    return bad(`unknown format '${values.format}' (expected ${contentFormats.join(", ")})`, usage.parse)
  if (values.out !== undefined && values.out.trim() === "") return bad("--out needs a directory", usage.parse)
  return { _tag: "Parse", files: positionals, format: format as ContentFormat, out: values.out }
}

/** Turns argv (without node and the script) into a Command; never throws. */
export const parseCommand = (argv: ReadonlyArray<string>): Command => {
  const [command, ...rest] = argv
  try {
    if (command === undefined) return bad("missing command", usage.main)
    if (isHelp(command)) return { _tag: "Help", text: usage.main }
    switch (command) {
      case "start":
        return startCommand(rest)
      case "migrate":
        return migrateCommand(rest)
      case "keys":
        return keysCommand(rest)
      case "users":
        return usersCommand(rest)
      case "graphql":
        return graphqlCommand(rest)
      case "parse":
        return parseFilesCommand(rest)
      default:
        return bad(`unknown command '${command}'`, usage.main)
    }
  } catch (e) {
    // parseArgs: unknown option, missing option value, …
    const text =
      command === "start"
        ? usage.start
        : command === "migrate"
          ? usage.migrate
          : command === "graphql"
            ? usage.graphql
            : command === "parse"
              ? usage.parse
              : command === "keys"
                ? rest[0] === "create"
                  ? usage.keysCreate
                  : rest[0] === "list"
                    ? usage.keysList
                    : rest[0] === "revoke"
                      ? usage.keysRevoke
                      : usage.keys
                : command === "users"
                  ? rest[0] === "create"
                    ? usage.usersCreate
                    : rest[0] === "list"
                      ? usage.usersList
                      : usage.users
                  : usage.main
    return bad(e instanceof Error ? e.message : String(e), text)
  }
}
