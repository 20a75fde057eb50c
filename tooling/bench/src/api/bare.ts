/**
 * The baseline of `pnpm bench:api`: the results page's own SQL (the count and the page of rows, with the
 * same joins, filter and order as the product's `GET …/results/`) served by a bare `node:http` handler over
 * `pg`, with no framework, authentication, validation or agent states. Env: DATABASE_URL, PROJECT_ID.
 * Prints `listening <port>` once it serves `GET /results?limit=&offset=`.
 */
import * as http from "node:http"
import pg from "pg"

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
const projectId = process.env.PROJECT_ID

const FROM = `from resolution_results rr
  join agents a on a.id = rr.agent_id and a.config_version = rr.agent_config_version
  join atomic_values av on av.id = rr.atomic_value_id
  where rr.project_id = $1 and a.project_id = $1 and a.is_draft = false`

const COUNT = `select count(*)::int as n ${FROM}`
const PAGE = `select rr.id, rr.atomic_value_id, rr.agent_id, rr.agent_config_version, rr.result_name, rr.value,
  rr.resolution_status, rr.justification, rr.references, rr.sources, rr.source_type, rr.is_web_supplement,
  rr.web_supplement, rr.is_overridden, rr.updated_by_email, rr.latest_review_status, rr.latest_review_comment,
  rr.latest_review_at, rr.latest_review_by, rr.created_at, rr.updated_at, a.name as agent_name, a.value_type,
  a.unit, av.dimension_values ${FROM}
  order by a.created_at, a.id, rr.result_name, rr.id limit $2 offset $3`

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost")
  const limit = Number(url.searchParams.get("limit") ?? 50)
  const offset = Number(url.searchParams.get("offset") ?? 0)
  Promise.all([pool.query(COUNT, [projectId]), pool.query(PAGE, [projectId, limit, offset])]).then(
    ([count, page]) => {
      const body = JSON.stringify({ count: count.rows[0].n, results: page.rows })
      res.writeHead(200, { "content-type": "application/json" }).end(body)
    },
    (e: unknown) => {
      res.writeHead(500).end(String(e))
    },
  )
})
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  console.log(`listening ${typeof address === "object" && address ? address.port : 0}`)
})
process.on("SIGTERM", () => {
  server.close()
  void pool.end()
})
