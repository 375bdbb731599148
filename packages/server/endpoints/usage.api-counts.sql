-- API usage counts (SPEC.md §4.3): requests per time bucket whose URL matches the project
-- pattern, split into REST, storage, auth and realtime by request path. The window starts one
-- hour (hourly), seven days (daily) or sixty minutes (minutely) before now and has no end bound.
with requests as (
  select
    case @interval
      when 'daily' then timestamp_trunc(t.timestamp, day)
      when 'minutely' then timestamp_trunc(t.timestamp, minute)
      else timestamp_trunc(t.timestamp, hour)
    end as bucket,
    r.path
  from `cloudflare.logs.prod` as t
    cross join unnest(t.metadata) as m
    cross join unnest(m.request) as r
  where regexp_contains(r.url, @project)
    and t.timestamp >= case @interval
      when 'daily' then timestamp_sub(current_timestamp(), interval 7 day)
      when 'minutely' then timestamp_sub(current_timestamp(), interval 60 minute)
      else timestamp_sub(current_timestamp(), interval 1 hour)
    end
)
select
  datetime(bucket, 'UTC') as timestamp,
  countif(regexp_contains(path, '/rest')) as total_rest_requests,
  countif(regexp_contains(path, '/storage')) as total_storage_requests,
  countif(regexp_contains(path, '/auth')) as total_auth_requests,
  countif(regexp_contains(path, '/realtime')) as total_realtime_requests
from requests
group by bucket
order by bucket asc
