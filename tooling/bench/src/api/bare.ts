/**
 * The baseline of `pnpm bench:api`: the cheapest SQL that returns the results page the product answers (a
 * keyset read through the same index, the page's JSON built by PostgreSQL, the count from the tallies),
 * prepared once, served by a bare `node:http` handler over `pg`: no framework, authentication, validation or
 * agents' states. Env: DATABASE_URL, PROJECT_ID. Prints `listening <port>` once it serves
 * `GET /results?limit=`.
 */
import * as http from "node:http"
import pg from "pg"

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
const projectId = process.env.PROJECT_ID

const PAGE = `
  select json_build_object(
    'count', (select coalesce(sum(t.n), 0)::int from result_tallies t join agents a on a.id = t.agent_id
              where a.project_id = $1),
    'next', null, 'previous', null,
    'results', coalesce(json_agg(json_build_object(
      'id', rr.atomic_value_id, 'atomic_value_id', rr.atomic_value_id, 'agent_id', rr.agent_id, 'agent_name', a.name,
      'result_name', rr.result_name, 'value_type', a.value_type, 'extraction_status', 'Processed',
      'resolution_result', json_build_object(
        'id', rr.id, 'value', rr.value, 'resolution_status', rr.resolution_status, 'references', rr."references",
        'justification_for_resolution_status', rr.justification, 'source_type', rr.source_type,
        'updated_by_email', rr.updated_by_email, 'confidence', rr.confidence),
      'dimension_instances', av.dimension_values) order by p.position), '[]'::json))::text as body
  from unnest(array(select rr.id from resolution_results rr where rr.project_id = $1 and rr.is_current
                    order by rr.agent_created_at, rr.agent_id, rr.list_name, rr.id limit $2)) with ordinality as p(id, position)
  join resolution_results rr on rr.id = p.id
  join agents a on a.id = rr.agent_id
  join atomic_values av on av.id = rr.atomic_value_id`

const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://localhost")
  const limit = Number(url.searchParams.get("limit") ?? 50)
  pool.query({ name: "page", text: PAGE, values: [projectId, limit] }).then(
    (r) => {
      res.writeHead(200, { "content-type": "application/json" }).end(r.rows[0].body)
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
