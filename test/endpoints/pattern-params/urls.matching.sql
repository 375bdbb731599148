-- A pattern parameter read three ways: as a filter, as a value and inside an aggregate.
with requests as (
  select t.id, r.url, r.path
  from `cloudflare.logs.prod` as t
    cross join unnest(t.metadata) as m
    cross join unnest(m.request) as r
)
select
  id,
  regexp_contains(path, @pattern) as path_matches,
  countif(regexp_contains(url, @pattern)) over () as matching
from requests
where regexp_contains(url, @pattern)
order by id
