/**
 * The baseline of `pnpm bench:api`: the cheapest SQL that returns the results page of 100 the product answers
 * (a keyset read of the page's rows through the same index, the page's JSON assembled by PostgreSQL from the parts each result
 * keeps, the count from the tallies), prepared once, served by a bare `node:http` handler over `pg`: no
 * framework, authentication, validation or agents' states. Env: DATABASE_URL, PROJECT_ID. Prints
 * `listening <port>` once it serves `GET /results`.
 */
import * as http from "node:http"
import pg from "pg"

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
const projectId = process.env.PROJECT_ID

const PAGE = `
  select '{"count":' || (select coalesce(sum(t.n), 0) from result_tallies t join agents a on a.id = t.agent_id
                         where a.project_id = $1)
    || ',"next":null,"previous":null,"results":[' || coalesce(string_agg('{"id":"' || rr.atomic_value_id
    || '","atomic_value_id":"' || rr.atomic_value_id || '","agent_id":"' || rr.agent_id
    || '","agent_name":' || to_json(a.name)::text || ',"result_name":' || to_json(rr.result_name)::text
    || ',"value_type":' || to_json(a.value_type)::text || ',"extraction_status":"Processed","resolution_result":'
    || rr.summary_json || ',"dimension_instances":' || av.dimension_values::text || '}', ',' order by rr.position), '')
    || ']}' as body
  from (select rr.atomic_value_id, rr.agent_id, rr.result_name, rr.summary_json,
               row_number() over (order by rr.agent_created_at, rr.agent_id, rr.list_name, rr.id) as position
        from resolution_results rr where rr.project_id = $1 and rr.is_current
        order by rr.agent_created_at, rr.agent_id, rr.list_name, rr.id limit 100) rr
  join agents a on a.id = rr.agent_id
  join atomic_values av on av.id = rr.atomic_value_id`

const server = http.createServer((_request, res) => {
  pool.query({ name: "page", text: PAGE, values: [projectId] }).then(
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
