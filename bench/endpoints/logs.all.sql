-- Log search (SPEC.md §4.2). Nine sources, one CTE each, exposing the same four columns; the
-- final SELECT reads the edge logs only. Filters run in the order project, then time range.
-- An empty or absent bound is bound as NULL (timestamp parameters) and skipped.
with edge_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `cloudflare.logs.prod` as t
  where t.project = @project
    and (@iso_timestamp_start is null or t.timestamp > @iso_timestamp_start)
    and (@iso_timestamp_end is null or t.timestamp <= @iso_timestamp_end)
  order by t.timestamp desc
),
postgres_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `postgres.logs` as t
  where t.project = @project
    and (@iso_timestamp_start is null or t.timestamp > @iso_timestamp_start)
    and (@iso_timestamp_end is null or t.timestamp <= @iso_timestamp_end)
  order by t.timestamp desc
),
function_edge_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `deno-relay-logs` as t
    cross join unnest(t.metadata) as m
  where m.project_ref = @project
    and (@iso_timestamp_start is null or t.timestamp > @iso_timestamp_start)
    and (@iso_timestamp_end is null or t.timestamp <= @iso_timestamp_end)
  order by t.timestamp desc
),
function_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `deno-subhosting-events` as t
    cross join unnest(t.metadata) as m
  where m.project_ref = @project
    and (@iso_timestamp_start is null or t.timestamp > @iso_timestamp_start)
    and (@iso_timestamp_end is null or t.timestamp <= @iso_timestamp_end)
  order by t.timestamp desc
),
auth_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `gotrue.logs.prod` as t
  where t.project = @project
    and (@iso_timestamp_start is null or t.timestamp > @iso_timestamp_start)
    and (@iso_timestamp_end is null or t.timestamp <= @iso_timestamp_end)
  order by t.timestamp desc
),
realtime_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `realtime.logs.prod` as t
    cross join unnest(t.metadata) as m
  where m.project = @project
    and (@iso_timestamp_start is null or t.timestamp > @iso_timestamp_start)
    and (@iso_timestamp_end is null or t.timestamp <= @iso_timestamp_end)
  order by t.timestamp desc
),
storage_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `storage.logs.prod.2` as t
    cross join unnest(t.metadata) as m
  where m.project = @project
    and (@iso_timestamp_start is null or t.timestamp > @iso_timestamp_start)
    and (@iso_timestamp_end is null or t.timestamp <= @iso_timestamp_end)
  order by t.timestamp desc
),
postgrest_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `postgREST.logs.prod` as t
  where t.project = @project
    and (@iso_timestamp_start is null or t.timestamp > @iso_timestamp_start)
    and (@iso_timestamp_end is null or t.timestamp <= @iso_timestamp_end)
  order by t.timestamp desc
),
pgbouncer_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `pgbouncer.logs.prod` as t
  where t.project = @project
    and (@iso_timestamp_start is null or t.timestamp > @iso_timestamp_start)
    and (@iso_timestamp_end is null or t.timestamp <= @iso_timestamp_end)
  order by t.timestamp desc
)
select id, timestamp, event_message, metadata
from edge_logs
limit 100
