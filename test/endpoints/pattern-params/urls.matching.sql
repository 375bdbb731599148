-- A pattern parameter read four ways: as a filter, as a pattern in a value, inside an aggregate,
-- and as the text it is (bound as sent, not as any engine's pattern syntax).
with requests as (
  select t.id, r.url, r.path
  from `cloudflare.logs.prod` as t
    cross join unnest(t.metadata) as m
    cross join unnest(m.request) as r
)
select
  id,
  @pattern as shown,
  regexp_contains(path, @pattern) as path_matches,
  countif(regexp_contains(url, @pattern)) over () as matching
from requests
where regexp_contains(url, @pattern)
order by id
