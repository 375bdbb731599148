// The hand-made events every SQL case runs over (DESIGN.md §3, log-event-shapes.md). Lines are
// NDJSON text, not JS objects, so that integers beyond 2^53 reach the loader exactly.
//
// Every expected row in ./cases is derived by hand from the tables below; keep them in sync.
// Timestamps are UTC. "-" = the field is absent; "null" = present with a JSON null.
//
// cloudflare.logs.prod (EDGE) — metadata.request / .response, hosted and self-hosted shapes
// id  timestamp                    project method path                                     status origin cf.country asn   latitude  score verified detectionIds        content_length x_real_ip       cache   counter
// e01 2025-01-15 10:00:00          alpha   GET    /rest/v1/todos                           200    12     US         13335 37.7749   99    false    [1001,1002]         "0"            203.0.113.7     MISS    -
// e02 2025-01-15 10:00:00.000001   alpha   POST   /rest/v1/todos                           201    40     DE         3320  52.52     30    false    []                  "512"          198.51.100.23   DYNAMIC -
// e03 2025-01-15 10:30:00.5        alpha   GET    /auth/v1/user                            401    5      US         13335 37.7749   1     false    [1003]              "0"            203.0.113.7     DYNAMIC -
// e04 2025-01-15 10:59:59.999999   alpha   GET    /storage/v1/object/public/avatars/a.png  404    7      FR         15169 48.8566   95    true     [1001]              "0"            192.0.2.10      HIT     -
// e05 2025-01-15 11:00:00          alpha   POST   /rest/v1/rpc/slow                        500    2500   US         13335 37.7749   (no botManagement)            "17"           203.0.113.7     DYNAMIC -
// e06 2025-01-15 11:15:00          beta    GET    /realtime/v1/websocket                   101    1      BR         28573 -23.5505  50    false    [1002,1004,1004]    -              198.51.100.23   (no response headers)
// e07 2025-01-15 11:20:00          beta    DELETE /rest/v1/todos                           204    3      null       28573 -23.5505  (no botManagement)            "0"            198.51.100.23   (no response headers); cf_ipcountry null
// e08 2025-01-15 11:45:00          beta    GET    /functions/v1/hello                      503    30000  US         13335 37.7749   99    false    [1001]              "0"            203.0.113.99    BYPASS  -
// e09 2025-01-15 11:59:59          alpha   (no metadata at all)
// e10 2025-01-14 23:59:59.999999   gamma   GET    /rest/v1/                                200    -      (self-hosted: request{method,path,protocol,headers{referer,user_agent,cf_connecting_ip}}, response{status_code})
// e11 2025-01-15 00:00:00          gamma   POST   /auth/v1/token?grant_type=password       400    -      (self-hosted, as e10)                                                                               counter 9007199254740993
// e12 2025-01-15 09:00:00.123456   gamma   GET    /rest/v1/items                           200    9      FR         15169 48.8566   95    true     [1001,1005]         "0"            192.0.2.10      HIT     counter -42
// user agents: e01 e03 e05 curl/8.4.0; e02 e06 e07 "Mozilla/5.0 (Macintosh)"; e04 e12 Googlebot/2.1; e08 Deno/1.40; e10 e11 supabase-js/2.39.0
// cf_connecting_ip (self-hosted only): e10 e11 203.0.113.50. search: e01 "?select=*", e02 "" (empty), e07 "?id=eq.1", e12 "?limit=1".
// content_type: e01 e02 e03 e05 e12 application/json; e04 text/plain; e08 text/html.
//
// postgres.logs (PG) — metadata.host "db-default" on every event with metadata; metadata.parsed
// id  timestamp  project error_severity user_name      database_name sql_state_code process_id backend_type       command_tag query_id
// p01 10:00:00   alpha   LOG            -              -             -              101        client backend     -           -
// p02 10:05:00   alpha   ERROR          authenticator  postgres      23505          102        client backend     INSERT      1234567890123 (a number)
// p03 10:10:00   alpha   LOG            -              -             -              55         checkpointer       -           -
// p04 10:15:00   alpha   LOG            postgres       postgres      -              103        pg_cron            -           -
// p05 10:20:00   alpha   ERROR          authenticator  postgres      42P01          104        client backend     SELECT      "-" (a string: query_id widens to STRING)
// p06 10:25:00   beta    FATAL          supabase_admin -             57P01          201        client backend     -           -
// p07 10:30:00   beta    WARNING        (self-hosted: parsed{error_severity, timestamp})
// p08 10:35:00   beta    LOG            (self-hosted: parsed{error_severity, timestamp})
// p09 10:40:00   beta    (metadata{host} only: no parsed)
// p10 10:45:00   -       null           -              -             -              401        autovacuum worker  -           -     (no top-level project)
// All on 2025-01-15.
//
// gotrue.logs.prod (AUTH) — event_message is the GoTrue JSON line
// id  timestamp project level   status path    method msg                            error                                     duration   metering auth_event(action, actor_id, provider)  args
// a01 10:00:00  alpha   info    200    /token  POST   request completed              -                                         15000000   true     login, u-1, email                        -
// a02 10:01:00  alpha   info    200    /token  POST   request completed              -                                         9000000    true     token_refreshed, u-2, google             -
// a03 10:02:00  alpha   warning 400    /token  POST   request completed              invalid_grant: Invalid login credentials  3000000    false    -                                        -
// a04 10:03:00  alpha   error   500    /user   GET    request completed              database error                            120000000  -        -                                        -
// a05 10:04:00  alpha   info    -      /health GET    request completed              -                                         500000     -        -                                        -
// a06 10:05:00  beta    info    200    /signup POST   request completed              -                                         25000000   true     user_signedup, u-3, email                ["--signup","--email"]
// a07 10:06:00  beta    error   422    /signup POST   request completed              email address already registered          8000000    -        -                                        []
// a08 10:07:00  beta    fatal   -      -       -      failed to connect to database  dial tcp: connection refused              -          -        -                                        -
// a09 10:08:00  alpha   info    200    /verify GET    request completed              null                                      4000000    -        -                                        -
// a10 10:09:00  alpha   (no metadata)
//
// storage.logs.prod.2 (STORAGE) — no top-level project; metadata.context is an ARRAY of objects
// id  timestamp                      level project tenantId reqId  res.statusCode responseTime context
// s01 10:00:00                       info  alpha   alpha    req-1  200            12.5         [{storage-1, 11}]
// s02 10:01:00                       info  alpha   alpha    req-2  404            3.25         [{storage-1, 11}]
// s03 10:02:00                       error alpha   alpha    req-3  400            0.5          [{storage-2, 12}, {storage-2, 13}]
// s04 10:03:00                       info  beta    beta     req-4  200            100 (int)    []
// s05 10:04:00                       info  beta    beta     -      -              -            -
// s06 10:05:00                       warn  beta    beta     req-6  503            2000.75      null
// s07 10:06:00                       (no metadata)
// s08 10:07:00 (given as integer µs) info  gamma   gamma    req-8  201            45.5         [{storage-1, 11}]
// event_message: s03 "Object not found", s05 "server started", s07 "shutting down", the rest "request completed".
//
// realtime.logs.prod (RT) — metadata.context is an object (a record of one); measurements on billing events
// r01 10:00:00 alpha  info    measurements{connected 10, limit 200}       "Billing metrics: realtime:alpha"
// r02 10:01:00 alpha  info    context{application realtime, domain [elixir, phoenix], pid "<0.123.0>", time 1736935260000000, vm{node realtime@10.0.0.1}}  "Connection closed"
// r03 10:02:00 beta   info    measurements{connected 0, limit 200}        "Billing metrics: realtime:beta"
// r04 10:03:00 beta   error   context{application realtime, domain [], pid "<0.456.0>", time 1736935380000000, vm{node realtime@10.0.0.2}}  "Tenant not found"
// r05 10:04:00 default warning (self-hosted: project, external_id, level)  "Realtime started"
// (project = metadata.project = metadata.external_id; no top-level project)
//
// deno-relay-logs (FN): f01 10:00 alpha POST /hello 200 35ms fn-hello; f02 10:01 alpha OPTIONS /hello 204 2ms fn-hello;
//   f03 10:02 alpha POST /resize 500 1500ms fn-resize (search "?w=100"); f04 10:03 default (self-hosted: project_ref only)
// deno-subhosting-events (FNLOG): d01 10:00:00 log/log fn-hello ex-1; d02 10:00:01 info/boot fn-hello; d03 10:00:02 error/uncaughtException fn-resize
// postgREST.logs.prod (REST): t01 10:00:00 alpha db-alpha; t02 10:00:01 alpha db-alpha; t03 10:00:02 beta db-beta (metadata{host} only)
// pgbouncer.logs.prod: no events.

export const EDGE_LINES = [
  String.raw`{"id":"e01","timestamp":"2025-01-15T10:00:00Z","project":"alpha","event_message":"GET | 200 | 203.0.113.7 | https://alpha.supabase.co/rest/v1/todos?select=* | curl/8.4.0","metadata":{"request":{"method":"GET","path":"/rest/v1/todos","url":"https://alpha.supabase.co/rest/v1/todos?select=*","host":"alpha.supabase.co","search":"?select=*","headers":{"x_real_ip":"203.0.113.7","user_agent":"curl/8.4.0","cf_ipcountry":"US","content_length":"0"},"cf":{"country":"US","asn":13335,"latitude":37.7749,"botManagement":{"score":99,"verifiedBot":false,"detectionIds":[1001,1002]}}},"response":{"status_code":200,"origin_time":12,"headers":{"content_type":"application/json","cf_cache_status":"MISS"}}}}`,
  String.raw`{"id":"e02","timestamp":"2025-01-15T10:00:00.000001Z","project":"alpha","event_message":"POST | 201 | 198.51.100.23 | https://alpha.supabase.co/rest/v1/todos | Mozilla/5.0 (Macintosh)","metadata":{"request":{"method":"POST","path":"/rest/v1/todos","url":"https://alpha.supabase.co/rest/v1/todos","host":"alpha.supabase.co","search":"","headers":{"x_real_ip":"198.51.100.23","user_agent":"Mozilla/5.0 (Macintosh)","cf_ipcountry":"DE","content_length":"512"},"cf":{"country":"DE","asn":3320,"latitude":52.52,"botManagement":{"score":30,"verifiedBot":false,"detectionIds":[]}}},"response":{"status_code":201,"origin_time":40,"headers":{"content_type":"application/json","cf_cache_status":"DYNAMIC"}}}}`,
  String.raw`{"id":"e03","timestamp":"2025-01-15T10:30:00.5Z","project":"alpha","event_message":"GET | 401 | 203.0.113.7 | https://alpha.supabase.co/auth/v1/user | curl/8.4.0","metadata":{"request":{"method":"GET","path":"/auth/v1/user","url":"https://alpha.supabase.co/auth/v1/user","host":"alpha.supabase.co","headers":{"x_real_ip":"203.0.113.7","user_agent":"curl/8.4.0","cf_ipcountry":"US","content_length":"0"},"cf":{"country":"US","asn":13335,"latitude":37.7749,"botManagement":{"score":1,"verifiedBot":false,"detectionIds":[1003]}}},"response":{"status_code":401,"origin_time":5,"headers":{"content_type":"application/json","cf_cache_status":"DYNAMIC"}}}}`,
  String.raw`{"id":"e04","timestamp":"2025-01-15T10:59:59.999999Z","project":"alpha","event_message":"GET | 404 | 192.0.2.10 | https://alpha.supabase.co/storage/v1/object/public/avatars/a.png | Googlebot/2.1","metadata":{"request":{"method":"GET","path":"/storage/v1/object/public/avatars/a.png","url":"https://alpha.supabase.co/storage/v1/object/public/avatars/a.png","host":"alpha.supabase.co","headers":{"x_real_ip":"192.0.2.10","user_agent":"Googlebot/2.1","cf_ipcountry":"FR","content_length":"0"},"cf":{"country":"FR","asn":15169,"latitude":48.8566,"botManagement":{"score":95,"verifiedBot":true,"detectionIds":[1001]}}},"response":{"status_code":404,"origin_time":7,"headers":{"content_type":"text/plain","cf_cache_status":"HIT"}}}}`,
  String.raw`{"id":"e05","timestamp":"2025-01-15T11:00:00Z","project":"alpha","event_message":"POST | 500 | 203.0.113.7 | https://alpha.supabase.co/rest/v1/rpc/slow | curl/8.4.0","metadata":{"request":{"method":"POST","path":"/rest/v1/rpc/slow","url":"https://alpha.supabase.co/rest/v1/rpc/slow","host":"alpha.supabase.co","headers":{"x_real_ip":"203.0.113.7","user_agent":"curl/8.4.0","cf_ipcountry":"US","content_length":"17"},"cf":{"country":"US","asn":13335,"latitude":37.7749}},"response":{"status_code":500,"origin_time":2500,"headers":{"content_type":"application/json","cf_cache_status":"DYNAMIC"}}}}`,
  String.raw`{"id":"e06","timestamp":"2025-01-15T11:15:00Z","project":"beta","event_message":"GET | 101 | 198.51.100.23 | https://beta.supabase.co/realtime/v1/websocket | Mozilla/5.0 (Macintosh)","metadata":{"request":{"method":"GET","path":"/realtime/v1/websocket","url":"https://beta.supabase.co/realtime/v1/websocket","host":"beta.supabase.co","headers":{"x_real_ip":"198.51.100.23","user_agent":"Mozilla/5.0 (Macintosh)","cf_ipcountry":"BR"},"cf":{"country":"BR","asn":28573,"latitude":-23.5505,"botManagement":{"score":50,"verifiedBot":false,"detectionIds":[1002,1004,1004]}}},"response":{"status_code":101,"origin_time":1}}}`,
  String.raw`{"id":"e07","timestamp":"2025-01-15T11:20:00Z","project":"beta","event_message":"DELETE | 204 | 198.51.100.23 | https://beta.supabase.co/rest/v1/todos?id=eq.1 | Mozilla/5.0 (Macintosh)","metadata":{"request":{"method":"DELETE","path":"/rest/v1/todos","url":"https://beta.supabase.co/rest/v1/todos?id=eq.1","host":"beta.supabase.co","search":"?id=eq.1","headers":{"x_real_ip":"198.51.100.23","user_agent":"Mozilla/5.0 (Macintosh)","cf_ipcountry":null,"content_length":"0"},"cf":{"country":null,"asn":28573,"latitude":-23.5505}},"response":{"status_code":204,"origin_time":3}}}`,
  String.raw`{"id":"e08","timestamp":"2025-01-15T11:45:00Z","project":"beta","event_message":"GET | 503 | 203.0.113.99 | https://beta.supabase.co/functions/v1/hello | Deno/1.40","metadata":{"request":{"method":"GET","path":"/functions/v1/hello","url":"https://beta.supabase.co/functions/v1/hello","host":"beta.supabase.co","headers":{"x_real_ip":"203.0.113.99","user_agent":"Deno/1.40","cf_ipcountry":"US","content_length":"0"},"cf":{"country":"US","asn":13335,"latitude":37.7749,"botManagement":{"score":99,"verifiedBot":false,"detectionIds":[1001]}}},"response":{"status_code":503,"origin_time":30000,"headers":{"content_type":"text/html","cf_cache_status":"BYPASS"}}}}`,
  String.raw`{"id":"e09","timestamp":"2025-01-15T11:59:59Z","project":"alpha","event_message":"worker heartbeat"}`,
  String.raw`{"id":"e10","timestamp":"2025-01-14T23:59:59.999999Z","project":"gamma","event_message":"203.0.113.50 - - [14/Jan/2025:23:59:59 +0000] \"GET /rest/v1/ HTTP/1.1\" 200 12 \"-\" \"supabase-js/2.39.0\"","metadata":{"request":{"method":"GET","path":"/rest/v1/","protocol":"HTTP/1.1","headers":{"referer":"-","user_agent":"supabase-js/2.39.0","cf_connecting_ip":"203.0.113.50"}},"response":{"status_code":200}}}`,
  String.raw`{"id":"e11","timestamp":"2025-01-15T00:00:00Z","project":"gamma","event_message":"203.0.113.50 - - [15/Jan/2025:00:00:00 +0000] \"POST /auth/v1/token?grant_type=password HTTP/1.1\" 400 77 \"-\" \"supabase-js/2.39.0\"","metadata":{"request":{"method":"POST","path":"/auth/v1/token?grant_type=password","protocol":"HTTP/1.1","headers":{"referer":"-","user_agent":"supabase-js/2.39.0","cf_connecting_ip":"203.0.113.50"}},"response":{"status_code":400},"counter":9007199254740993}}`,
  String.raw`{"id":"e12","timestamp":"2025-01-15T09:00:00.123456Z","project":"gamma","event_message":"GET | 200 | 192.0.2.10 | https://gamma.supabase.co/rest/v1/items?limit=1 | Googlebot/2.1","metadata":{"request":{"method":"GET","path":"/rest/v1/items","url":"https://gamma.supabase.co/rest/v1/items?limit=1","host":"gamma.supabase.co","search":"?limit=1","headers":{"x_real_ip":"192.0.2.10","user_agent":"Googlebot/2.1","cf_ipcountry":"FR","content_length":"0"},"cf":{"country":"FR","asn":15169,"latitude":48.8566,"botManagement":{"score":95,"verifiedBot":true,"detectionIds":[1001,1005]}}},"response":{"status_code":200,"origin_time":9,"headers":{"content_type":"application/json","cf_cache_status":"HIT"}},"counter":-42}}`,
];

export const PG_LINES = [
  String.raw`{"id":"p01","timestamp":"2025-01-15T10:00:00Z","project":"alpha","event_message":"connection received: host=10.0.0.5 port=5432","metadata":{"host":"db-default","parsed":{"error_severity":"LOG","process_id":101,"backend_type":"client backend"}}}`,
  String.raw`{"id":"p02","timestamp":"2025-01-15T10:05:00Z","project":"alpha","event_message":"duplicate key value violates unique constraint \"todos_pkey\"","metadata":{"host":"db-default","parsed":{"error_severity":"ERROR","user_name":"authenticator","database_name":"postgres","sql_state_code":"23505","process_id":102,"backend_type":"client backend","command_tag":"INSERT","query":"insert into todos values (1)","query_id":1234567890123}}}`,
  String.raw`{"id":"p03","timestamp":"2025-01-15T10:10:00Z","project":"alpha","event_message":"checkpoint starting: time","metadata":{"host":"db-default","parsed":{"error_severity":"LOG","process_id":55,"backend_type":"checkpointer"}}}`,
  String.raw`{"id":"p04","timestamp":"2025-01-15T10:15:00Z","project":"alpha","event_message":"cron job 1 starting: select 1","metadata":{"host":"db-default","parsed":{"error_severity":"LOG","user_name":"postgres","database_name":"postgres","process_id":103,"backend_type":"pg_cron"}}}`,
  String.raw`{"id":"p05","timestamp":"2025-01-15T10:20:00Z","project":"alpha","event_message":"relation \"public.missing\" does not exist","metadata":{"host":"db-default","parsed":{"error_severity":"ERROR","user_name":"authenticator","database_name":"postgres","sql_state_code":"42P01","process_id":104,"backend_type":"client backend","command_tag":"SELECT","query":"select * from missing","query_id":"-"}}}`,
  String.raw`{"id":"p06","timestamp":"2025-01-15T10:25:00Z","project":"beta","event_message":"terminating connection due to administrator command","metadata":{"host":"db-default","parsed":{"error_severity":"FATAL","user_name":"supabase_admin","sql_state_code":"57P01","process_id":201,"backend_type":"client backend"}}}`,
  String.raw`{"id":"p07","timestamp":"2025-01-15T10:30:00Z","project":"beta","event_message":"2025-01-15 10:30:00.000 UTC [299] WARNING:  could not receive data from client: Connection reset by peer","metadata":{"host":"db-default","parsed":{"error_severity":"WARNING","timestamp":"2025-01-15 10:30:00.000 UTC"}}}`,
  String.raw`{"id":"p08","timestamp":"2025-01-15T10:35:00Z","project":"beta","event_message":"2025-01-15 10:35:00.000 UTC [301] LOG:  cron job 2 completed: 1 row","metadata":{"host":"db-default","parsed":{"error_severity":"LOG","timestamp":"2025-01-15 10:35:00.000 UTC"}}}`,
  String.raw`{"id":"p09","timestamp":"2025-01-15T10:40:00Z","project":"beta","event_message":"database system is ready to accept connections","metadata":{"host":"db-default"}}`,
  String.raw`{"id":"p10","timestamp":"2025-01-15T10:45:00Z","event_message":"autovacuum: processing database \"postgres\"","metadata":{"host":"db-default","parsed":{"error_severity":null,"process_id":401,"backend_type":"autovacuum worker"}}}`,
];

export const AUTH_LINES = [
  String.raw`{"id":"a01","timestamp":"2025-01-15T10:00:00Z","project":"alpha","event_message":"{\"auth_event\":{\"action\":\"login\",\"actor_id\":\"u-1\"},\"duration\":15000000,\"level\":\"info\",\"login_method\":\"password\",\"metering\":true,\"msg\":\"request completed\",\"path\":\"/token\",\"status\":200}","metadata":{"level":"info","status":200,"path":"/token","method":"POST","msg":"request completed","duration":15000000,"metering":true,"auth_event":{"action":"login","actor_id":"u-1","traits":{"provider":"email"}}}}`,
  String.raw`{"id":"a02","timestamp":"2025-01-15T10:01:00Z","project":"alpha","event_message":"{\"auth_event\":{\"action\":\"token_refreshed\",\"actor_id\":\"u-2\"},\"duration\":9000000,\"level\":\"info\",\"metering\":true,\"msg\":\"request completed\",\"path\":\"/token\",\"status\":200}","metadata":{"level":"info","status":200,"path":"/token","method":"POST","msg":"request completed","duration":9000000,"metering":true,"auth_event":{"action":"token_refreshed","actor_id":"u-2","traits":{"provider":"google"}}}}`,
  String.raw`{"id":"a03","timestamp":"2025-01-15T10:02:00Z","project":"alpha","event_message":"{\"duration\":3000000,\"error\":\"invalid_grant: Invalid login credentials\",\"level\":\"warning\",\"metering\":false,\"msg\":\"request completed\",\"path\":\"/token\",\"status\":400}","metadata":{"level":"warning","status":400,"path":"/token","method":"POST","msg":"request completed","error":"invalid_grant: Invalid login credentials","duration":3000000,"metering":false}}`,
  String.raw`{"id":"a04","timestamp":"2025-01-15T10:03:00Z","project":"alpha","event_message":"{\"duration\":120000000,\"error\":\"database error\",\"level\":\"error\",\"msg\":\"request completed\",\"path\":\"/user\",\"status\":500}","metadata":{"level":"error","status":500,"path":"/user","method":"GET","msg":"request completed","error":"database error","duration":120000000}}`,
  String.raw`{"id":"a05","timestamp":"2025-01-15T10:04:00Z","project":"alpha","event_message":"{\"duration\":500000,\"level\":\"info\",\"msg\":\"request completed\",\"path\":\"/health\"}","metadata":{"level":"info","path":"/health","method":"GET","msg":"request completed","duration":500000}}`,
  String.raw`{"id":"a06","timestamp":"2025-01-15T10:05:00Z","project":"beta","event_message":"{\"auth_event\":{\"action\":\"user_signedup\",\"actor_id\":\"u-3\"},\"duration\":25000000,\"level\":\"info\",\"metering\":true,\"msg\":\"request completed\",\"path\":\"/signup\",\"status\":200}","metadata":{"level":"info","status":200,"path":"/signup","method":"POST","msg":"request completed","duration":25000000,"metering":true,"auth_event":{"action":"user_signedup","actor_id":"u-3","traits":{"provider":"email"}},"args":["--signup","--email"]}}`,
  String.raw`{"id":"a07","timestamp":"2025-01-15T10:06:00Z","project":"beta","event_message":"{\"duration\":8000000,\"error\":\"email address already registered\",\"level\":\"error\",\"msg\":\"request completed\",\"path\":\"/signup\",\"status\":422}","metadata":{"level":"error","status":422,"path":"/signup","method":"POST","msg":"request completed","error":"email address already registered","duration":8000000,"args":[]}}`,
  String.raw`{"id":"a08","timestamp":"2025-01-15T10:07:00Z","project":"beta","event_message":"{\"error\":\"dial tcp: connection refused\",\"level\":\"fatal\",\"msg\":\"failed to connect to database\"}","metadata":{"level":"fatal","msg":"failed to connect to database","error":"dial tcp: connection refused"}}`,
  String.raw`{"id":"a09","timestamp":"2025-01-15T10:08:00Z","project":"alpha","event_message":"{\"duration\":4000000,\"level\":\"info\",\"msg\":\"request completed\",\"path\":\"/verify\",\"status\":200}","metadata":{"level":"info","status":200,"path":"/verify","method":"GET","msg":"request completed","error":null,"duration":4000000}}`,
  String.raw`{"id":"a10","timestamp":"2025-01-15T10:09:00Z","project":"alpha","event_message":"{\"level\":\"info\",\"msg\":\"GoTrue API started\"}"}`,
];

export const STORAGE_LINES = [
  String.raw`{"id":"s01","timestamp":"2025-01-15T10:00:00Z","event_message":"request completed","metadata":{"context":[{"host":"storage-1","pid":11}],"level":"info","project":"alpha","tenantId":"alpha","reqId":"req-1","res":{"statusCode":200},"responseTime":12.5}}`,
  String.raw`{"id":"s02","timestamp":"2025-01-15T10:01:00Z","event_message":"request completed","metadata":{"context":[{"host":"storage-1","pid":11}],"level":"info","project":"alpha","tenantId":"alpha","reqId":"req-2","res":{"statusCode":404},"responseTime":3.25}}`,
  String.raw`{"id":"s03","timestamp":"2025-01-15T10:02:00Z","event_message":"Object not found","metadata":{"context":[{"host":"storage-2","pid":12},{"host":"storage-2","pid":13}],"level":"error","project":"alpha","tenantId":"alpha","reqId":"req-3","res":{"statusCode":400},"responseTime":0.5}}`,
  String.raw`{"id":"s04","timestamp":"2025-01-15T10:03:00Z","event_message":"request completed","metadata":{"context":[],"level":"info","project":"beta","tenantId":"beta","reqId":"req-4","res":{"statusCode":200},"responseTime":100}}`,
  String.raw`{"id":"s05","timestamp":"2025-01-15T10:04:00Z","event_message":"server started","metadata":{"level":"info","project":"beta","tenantId":"beta"}}`,
  String.raw`{"id":"s06","timestamp":"2025-01-15T10:05:00Z","event_message":"request completed","metadata":{"context":null,"level":"warn","project":"beta","tenantId":"beta","reqId":"req-6","res":{"statusCode":503},"responseTime":2000.75}}`,
  String.raw`{"id":"s07","timestamp":"2025-01-15T10:06:00Z","event_message":"shutting down"}`,
  String.raw`{"id":"s08","timestamp":1736935620000000,"event_message":"request completed","metadata":{"context":[{"host":"storage-1","pid":11}],"level":"info","project":"gamma","tenantId":"gamma","reqId":"req-8","res":{"statusCode":201},"responseTime":45.5}}`,
];

export const REALTIME_LINES = [
  String.raw`{"id":"r01","timestamp":"2025-01-15T10:00:00Z","event_message":"Billing metrics: realtime:alpha","metadata":{"project":"alpha","external_id":"alpha","level":"info","measurements":{"connected":10,"limit":200}}}`,
  String.raw`{"id":"r02","timestamp":"2025-01-15T10:01:00Z","event_message":"Connection closed","metadata":{"project":"alpha","external_id":"alpha","level":"info","context":{"application":"realtime","domain":["elixir","phoenix"],"pid":"<0.123.0>","time":1736935260000000,"vm":{"node":"realtime@10.0.0.1"}}}}`,
  String.raw`{"id":"r03","timestamp":"2025-01-15T10:02:00Z","event_message":"Billing metrics: realtime:beta","metadata":{"project":"beta","external_id":"beta","level":"info","measurements":{"connected":0,"limit":200}}}`,
  String.raw`{"id":"r04","timestamp":"2025-01-15T10:03:00Z","event_message":"Tenant not found","metadata":{"project":"beta","external_id":"beta","level":"error","context":{"application":"realtime","domain":[],"pid":"<0.456.0>","time":1736935380000000,"vm":{"node":"realtime@10.0.0.2"}}}}`,
  String.raw`{"id":"r05","timestamp":"2025-01-15T10:04:00Z","event_message":"Realtime started","metadata":{"project":"default","external_id":"default","level":"warning"}}`,
];

export const FUNCTION_EDGE_LINES = [
  String.raw`{"id":"f01","timestamp":"2025-01-15T10:00:00Z","event_message":"POST | 200 | https://alpha.functions.supabase.co/hello","metadata":{"project_ref":"alpha","function_id":"fn-hello","deployment_id":"dep-1","execution_time_ms":35,"request":{"method":"POST","pathname":"/hello","url":"https://alpha.functions.supabase.co/hello"},"response":{"status_code":200}}}`,
  String.raw`{"id":"f02","timestamp":"2025-01-15T10:01:00Z","event_message":"OPTIONS | 204 | https://alpha.functions.supabase.co/hello","metadata":{"project_ref":"alpha","function_id":"fn-hello","deployment_id":"dep-1","execution_time_ms":2,"request":{"method":"OPTIONS","pathname":"/hello","url":"https://alpha.functions.supabase.co/hello"},"response":{"status_code":204}}}`,
  String.raw`{"id":"f03","timestamp":"2025-01-15T10:02:00Z","event_message":"POST | 500 | https://alpha.functions.supabase.co/resize?w=100","metadata":{"project_ref":"alpha","function_id":"fn-resize","deployment_id":"dep-2","execution_time_ms":1500,"request":{"method":"POST","pathname":"/resize","search":"?w=100","url":"https://alpha.functions.supabase.co/resize?w=100"},"response":{"status_code":500}}}`,
  String.raw`{"id":"f04","timestamp":"2025-01-15T10:03:00Z","event_message":"serving the request with /home/deno/functions/hello","metadata":{"project_ref":"default"}}`,
];

export const FUNCTION_LOG_LINES = [
  String.raw`{"id":"d01","timestamp":"2025-01-15T10:00:00Z","event_message":"hello from fn","metadata":{"project_ref":"alpha","function_id":"fn-hello","level":"log","event_type":"log","execution_id":"ex-1"}}`,
  String.raw`{"id":"d02","timestamp":"2025-01-15T10:00:01Z","event_message":"boot","metadata":{"project_ref":"alpha","function_id":"fn-hello","level":"info","event_type":"boot"}}`,
  String.raw`{"id":"d03","timestamp":"2025-01-15T10:00:02Z","event_message":"unhandled rejection","metadata":{"project_ref":"alpha","function_id":"fn-resize","level":"error","event_type":"uncaughtException"}}`,
];

export const POSTGREST_LINES = [
  String.raw`{"id":"t01","timestamp":"2025-01-15T10:00:00Z","project":"alpha","event_message":"Attempting to connect to the database...","metadata":{"host":"db-alpha"}}`,
  String.raw`{"id":"t02","timestamp":"2025-01-15T10:00:01Z","project":"alpha","event_message":"Connection successful","metadata":{"host":"db-alpha"}}`,
  String.raw`{"id":"t03","timestamp":"2025-01-15T10:00:02Z","project":"beta","event_message":"Listening on port 3000","metadata":{"host":"db-beta"}}`,
];

/** Source name → its NDJSON lines; pgbouncer.logs.prod stays empty on purpose. */
export const EVENTS: Record<string, string[]> = {
  "cloudflare.logs.prod": EDGE_LINES,
  "postgres.logs": PG_LINES,
  "gotrue.logs.prod": AUTH_LINES,
  "storage.logs.prod.2": STORAGE_LINES,
  "realtime.logs.prod": REALTIME_LINES,
  "deno-relay-logs": FUNCTION_EDGE_LINES,
  "deno-subhosting-events": FUNCTION_LOG_LINES,
  "postgREST.logs.prod": POSTGREST_LINES,
};
