-- The constructs of the reference platform's own stored log-search query (Logflare,
-- priv/supabase/endpoints/logs.all.sql), written afresh: every parameter is a string (as that
-- platform binds them), time bounds are cast from text and skipped when empty through
-- CASE … THEN TRUE ELSE …, each source has a CTE that ends in ORDER BY without LIMIT (most
-- unread), record sources are unnested, and the final SELECT reads one CTE with a LIMIT.
with edge_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `cloudflare.logs.prod` as t
    cross join unnest(t.metadata) as meta
  where
    -- the project first, then the time range
    t.project = @project
    and case when coalesce(@iso_timestamp_start, '') = '' then true
      else cast(t.timestamp as timestamp) > cast(@iso_timestamp_start as timestamp) end
    and case when coalesce(@iso_timestamp_end, '') = '' then true
      else cast(t.timestamp as timestamp) <= cast(@iso_timestamp_end as timestamp) end
  order by cast(t.timestamp as timestamp) desc
),
postgres_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `postgres.logs` as t
  where t.project = @project
    and case when coalesce(@iso_timestamp_start, '') = '' then true
      else cast(t.timestamp as timestamp) > cast(@iso_timestamp_start as timestamp) end
  order by cast(t.timestamp as timestamp) desc
),
function_edge_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `deno-relay-logs` as t
    cross join unnest(t.metadata) as meta
  where meta.project_ref = @project
  order by cast(t.timestamp as timestamp) desc
),
realtime_logs as (
  select t.timestamp, t.id, t.event_message, t.metadata
  from `realtime.logs.prod` as t
    cross join unnest(t.metadata) as meta
  where meta.project = @project
  order by cast(t.timestamp as timestamp) desc
)
SELECT id, timestamp, event_message, metadata
FROM edge_logs
LIMIT 100
