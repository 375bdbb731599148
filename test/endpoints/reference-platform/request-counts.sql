-- The constructs of the reference platform's own stored usage-counter query (Logflare,
-- priv/supabase/endpoints/usage.api-counts.sql), written afresh: a one-row CTE of the window
-- start read back through its range variable (`window_start[0]`), CASE on a string parameter,
-- LEFT JOIN UNNEST … ON TRUE, a pattern parameter, trailing commas before FROM, a GROUP BY of an
-- alias that is also a column name, DATETIME(…, 'UTC'), COALESCE(SUM(…), 0) and a final `;`.
with
window_start as (
  select (case
    when @interval = 'minutely' then timestamp_sub(current_timestamp(), interval 60 minute)
    when @interval = 'daily' then timestamp_sub(current_timestamp(), interval 7 day)
    when @interval = 'hourly' then timestamp_sub(current_timestamp(), interval 1 hour)
  end) as since
),
per_bucket as (
  select
    (case
      when @interval = 'minutely' then timestamp_trunc(ev.timestamp, minute)
      when @interval = 'daily' then timestamp_trunc(ev.timestamp, day)
      when @interval = 'hourly' then timestamp_trunc(ev.timestamp, hour)
    end) as timestamp,
    countif(regexp_contains(req.path, '/rest')) as rest_count,
    countif(regexp_contains(req.path, '/storage')) as storage_count,
    countif(regexp_contains(req.path, '/auth')) as auth_count,
    countif(regexp_contains(req.path, '/realtime')) as realtime_count,
  from
    window_start,
    `cloudflare.logs.prod` as ev
    left join unnest(ev.metadata) as meta on true
    left join unnest(meta.request) as req on true
  where regexp_contains(req.url, @project) and ev.timestamp >= window_start[0]
  group by timestamp
)
select
  datetime(per_bucket.timestamp, 'UTC') as timestamp,
  coalesce(sum(per_bucket.rest_count), 0) as total_rest_requests,
  coalesce(sum(per_bucket.storage_count), 0) as total_storage_requests,
  coalesce(sum(per_bucket.auth_count), 0) as total_auth_requests,
  coalesce(sum(per_bucket.realtime_count), 0) as total_realtime_requests,
from per_bucket
group by timestamp
order by timestamp asc;
