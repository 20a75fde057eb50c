// Frozen, as the migration that uses it: never import application code here.
// What the tally triggers of `2026_11_29_0001_result_tallies` share, and those that replace them later.

export const STATUSES = [
  ["resolved", "Resolved"],
  ["requires_attention", "Requires attention"],
  ["not_resolved", "Not resolved"],
  ["ignored", "Ignored"],
  ["no_result", "No result"],
] as const

export const statusColumns = STATUSES.map(([c]) => c)

export type TriggerEvent = "insert" | "update" | "delete"

export const REFERENCING: Record<TriggerEvent, string> = {
  insert: "new table as new_rows",
  update: "old table as old_rows new table as new_rows",
  delete: "old table as old_rows",
}

/**
 * Per event, what a statement changed as rows of `columns` with `d`: +1 for each row after the statement,
 * -1 for each row before it (only the rows where `where` holds; `slot`, when given, is added as a column).
 */
export const changesByEvent = (
  columns: string,
  where: string,
  extra = "",
): ReadonlyArray<readonly [TriggerEvent, string]> => {
  const side = (rows: string, d: number) => `select ${columns}${extra}, ${d} as d from ${rows} where ${where}`
  return [
    ["insert", side("new_rows", 1)],
    ["update", `${side("new_rows", 1)} union all ${side("old_rows", -1)}`],
    ["delete", side("old_rows", -1)],
  ]
}

/**
 * How a result tally function finds each changed grid row's counts before the statement: `joined` (the
 * first functions, `2026_11_29_0001_result_tallies`) joins what the grid rows' upsert returned with the
 * changes, two row sets the planner knows nothing of; `per row` (`2026_12_02_0001_row_tallies_per_row`)
 * reads them by the rows' primary key, a sub-select per changed row.
 */
export type RowsBefore = "joined" | "per row"

/**
 * The body of the function `dxs_result_tally_<event>` over what a statement `changes` (see
 * `changesByEvent`): the result tallies per agent and status, the grid's rows (`result_rows`) and the
 * project's row tallies (`result_row_tallies`).
 */
export const resultTallyBody = (event: TriggerEvent, changes: string, before: RowsBefore): string => {
  const counts = ["cells", ...statusColumns]
  const sumBy = STATUSES.map(
    ([c, s]) => `coalesce(sum(d) filter (where resolution_status = '${s}'), 0)::int as ${c}`,
  ).join(", ")
  const add = (target: string, source: string) =>
    statusColumns.map((c) => `${c} = ${target}.${c} + ${source}.${c}`).join(", ")
  // Joined: a row's counts before are its counts after (what the upsert returns) less this statement's
  // changes. Per row: its counts before (zeros for a new row) plus the changes are its counts after.
  const became =
    before === "joined"
      ? (c: string) => `sum((r.${c} > 0)::int - (r.${c} - g.${c} > 0)::int)::int`
      : (c: string) => {
          const was = `b.was[${counts.indexOf(c) + 1}]`
          return `sum((${was} + b.${c} > 0)::int - (${was} > 0)::int)::int`
        }
  const anyGrew = (t: string) => [`${t}rows > 0`, ...statusColumns.map((c) => `${t}${c} > 0`)].join(" or ")
  const returning =
    before === "joined"
      ? `
            returning r.project_id, r.row_hash, r.cells, ${statusColumns.map((c) => `r.${c}`).join(", ")}`
      : ""
  const countedBefore =
    before === "joined"
      ? ""
      : `
        ), counted_before as (
          select g.*, coalesce((select array[${counts.map((c) => `r.${c}`).join(", ")}] from result_rows r
                                where r.project_id = g.project_id and r.row_hash = g.row_hash),
                               array[${counts.map(() => "0").join(", ")}]) as was
          from changed g`
  const moved =
    before === "joined"
      ? `
          select r.project_id, ${became("cells")} as rows,
                 ${statusColumns.map((c) => `${became(c)} as ${c}`).join(", ")}
          from (select * from grown union all select * from shrunk) r
          join changed g on g.project_id = r.project_id and g.row_hash = r.row_hash
          group by r.project_id`
      : `
          select b.project_id, ${became("cells")} as rows,
                 ${statusColumns.map((c) => `${became(c)} as ${c}`).join(", ")}
          from counted_before b
          group by b.project_id`
  return `
      begin
        if not exists (
          select 1 from (${changes}) c group by agent_id, row_hash, resolution_status having sum(d) <> 0
        ) then
          return null;
        end if;
        ${
          event === "delete"
            ? ""
            : `insert into result_row_tallies (project_id) select distinct project_id from new_rows where is_current
                 order by 1 on conflict do nothing;`
        }
        -- Writers of one project's results take its row tally first, so they queue there rather than
        -- deadlock over the grid's rows.
        perform 1 from result_row_tallies t
          where t.project_id in (select project_id from (${changes}) c) order by t.project_id for update;

        insert into result_tallies as t (agent_id, resolution_status, n)
          select agent_id, resolution_status, sum(d) from (${changes}) c
          group by agent_id, resolution_status having sum(d) > 0 order by agent_id, resolution_status
          on conflict (agent_id, resolution_status) do update set n = t.n + excluded.n;
        update result_tallies t set n = t.n + c.n
          from (select agent_id, resolution_status, sum(d) as n from (${changes}) c
                group by agent_id, resolution_status having sum(d) < 0) c
          where t.agent_id = c.agent_id and t.resolution_status = c.resolution_status;

        with g as (
          select project_id, row_hash, max(row_name) as row_name, max(dimension_key) as dimension_key,
                 sum(d)::int as cells, ${sumBy}
          from (${changes}) c group by project_id, row_hash
        ), changed as (
          select * from g where cells <> 0 or ${statusColumns.map((c) => `${c} <> 0`).join(" or ")}${countedBefore}
        ), grown as (
          insert into result_rows as r (project_id, row_hash, row_name, dimension_key, cells, ${statusColumns.join(", ")})
            select project_id, row_hash, row_name, dimension_key, cells, ${statusColumns.join(", ")}
            from changed where cells > 0 order by project_id, row_hash
            on conflict (project_id, row_hash) do update set cells = r.cells + excluded.cells, ${add("r", "excluded")}${returning}
        ), shrunk as (
          update result_rows r set cells = r.cells + g.cells, ${add("r", "g")}
            from changed g where g.cells <= 0 and r.project_id = g.project_id and r.row_hash = g.row_hash${returning}
        ), moved as (${moved}
        ), counted as (
          insert into result_row_tallies as t (project_id, rows, ${statusColumns.join(", ")})
            select project_id, rows, ${statusColumns.join(", ")} from moved where ${anyGrew("")}
            on conflict (project_id) do update set rows = t.rows + excluded.rows, ${add("t", "excluded")}
            returning t.project_id
        )
        update result_row_tallies t set rows = t.rows + m.rows, ${add("t", "m")}
          from moved m where t.project_id = m.project_id and not (${anyGrew("m.")});

        delete from result_rows r using (select distinct project_id, row_hash from (${changes}) c) c
          where r.project_id = c.project_id and r.row_hash = c.row_hash and r.cells <= 0;
        return null;
      end `
}
