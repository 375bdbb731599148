import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { INGEST_TOKEN, ingestEnv, postLogs, QUERY_TOKEN } from "./support/ingest.ts";
import { vectorHeaders, vectorJsonBody } from "./support/vector-body.ts";

/**
 * Supabase's self-hosting stack (docker/volumes/logs/vector.yml): a `docker_logs` source, one
 * remap per service, and one `http` sink per source posting `codec: json`, uncompressed, with
 * `x-api-key`, to `/api/logs?source_name=…`. The events below are what those remaps leave of a
 * container's line (the docker fields deleted; `message` moved to `event_message`, the
 * container's name to `appname`), with Vector's own timestamps (the docker line's, to the
 * nanosecond) or the one a remap parsed (nginx's, to the second), keys in Vector's order.
 */
const NOW = "2025-01-15T12:00:00Z";

const SINKS: Record<string, Record<string, unknown>[]> = {
  // kong_logs: parse_nginx_log(…, "combined"); the referer "-" parses to nothing, so it is null
  "cloudflare.logs.prod": [
    {
      appname: "supabase-kong",
      event_message:
        '172.18.0.1 - - [15/Jan/2025:11:58:01 +0000] "GET /rest/v1/todos?select=* HTTP/1.1" 200 54 "-" "supabase-js/2.39.0"',
      metadata: {
        request: {
          headers: { cf_connecting_ip: "172.18.0.1", referer: null, user_agent: "supabase-js/2.39.0" },
          method: "GET",
          path: "/rest/v1/todos?select=*",
          protocol: "HTTP/1.1",
        },
        response: { status_code: 200 },
      },
      project: "default",
      timestamp: "2025-01-15T11:58:01Z",
    },
    {
      appname: "supabase-kong",
      event_message:
        '172.18.0.1 - - [15/Jan/2025:11:58:02 +0000] "POST /auth/v1/token?grant_type=password HTTP/1.1" 400 91 "http://localhost:3000/" "Mozilla/5.0"',
      metadata: {
        request: {
          headers: {
            cf_connecting_ip: "172.18.0.1",
            referer: "http://localhost:3000/",
            user_agent: "Mozilla/5.0",
          },
          method: "POST",
          path: "/auth/v1/token?grant_type=password",
          protocol: "HTTP/1.1",
        },
        response: { status_code: 400 },
      },
      project: "default",
      timestamp: "2025-01-15T11:58:02Z",
    },
    // kong_err: parse_nginx_log(…, "error"), method and status set before parsing
    {
      appname: "supabase-kong",
      event_message:
        '2025/01/15 11:58:03 [error] 1234#0: *5 connect() failed (111: Connection refused) while connecting to upstream, client: 172.18.0.1, server: kong, request: "GET /storage/v1/bucket HTTP/1.1", host: "localhost:8000"',
      metadata: {
        request: {
          headers: { cf_connecting_ip: "172.18.0.1" },
          host: "localhost:8000",
          method: "GET",
          path: "/storage/v1/bucket",
          protocol: "HTTP/1.1",
        },
        response: { status_code: 200 },
      },
      project: "default",
      severity: "error",
      timestamp: "2025-01-15T11:58:03Z",
    },
  ],
  // auth_logs: GoTrue's JSON line parsed and merged into metadata, the text kept as event_message
  "gotrue.logs.prod": [
    {
      appname: "supabase-auth",
      event_message:
        '{"component":"api","level":"info","method":"GET","msg":"request completed","path":"/user","referer":"http://localhost:3000","remote_addr":"172.18.0.8","request_id":"8f4f5c3a-1b2c","status":200,"time":"2025-01-15T11:58:02Z"}',
      metadata: {
        component: "api",
        level: "info",
        method: "GET",
        msg: "request completed",
        path: "/user",
        referer: "http://localhost:3000",
        remote_addr: "172.18.0.8",
        request_id: "8f4f5c3a-1b2c",
        status: 200,
        time: "2025-01-15T11:58:02Z",
        timestamp: "2025-01-15T11:58:02Z",
      },
      project: "default",
      timestamp: "2025-01-15T11:58:02.123456789Z",
    },
  ],
  // rest_logs: the time before ": " parsed into the event's timestamp
  "postgREST.logs.prod": [
    {
      appname: "supabase-rest",
      event_message: "Listening for notifications on the pgrst channel",
      metadata: { host: "default" },
      project: "default",
      timestamp: "2025-01-15T11:58:04Z",
    },
  ],
  // realtime_logs: the project moved into metadata
  "realtime.logs.prod": [
    {
      appname: "realtime-dev.supabase-realtime",
      event_message: "Billing metrics: [:realtime, :rate_counter, :channel, :events]",
      metadata: { external_id: "default", level: "info", project: "default" },
      timestamp: "2025-01-15T11:58:05.5Z",
    },
  ],
  // functions_logs: the project moved to metadata.project_ref
  "deno-relay-logs": [
    {
      appname: "supabase-edge-functions",
      event_message: "serving the request with /home/deno/functions/hello",
      metadata: { project_ref: "default" },
      timestamp: "2025-01-15T11:58:06.000001Z",
    },
  ],
  // storage_logs: pino's JSON line (numeric level and time) parsed into metadata, a context array
  "storage.logs.prod.2": [
    {
      appname: "supabase-storage",
      event_message: "request completed",
      metadata: {
        context: [{ host: "4b3a2c1d0e9f", pid: 1 }],
        level: 30,
        project: "default",
        tenantId: "default",
        timestamp: 1736942286123,
      },
      timestamp: "2025-01-15T11:58:06.123456789Z",
    },
  ],
  // db_logs: the severity parsed from the line, Vector's timestamp copied into metadata
  "postgres.logs": [
    {
      appname: "supabase-db",
      event_message: "2025-01-15 11:58:07.123 UTC [1] LOG:  checkpoint starting: time",
      metadata: {
        host: "db-default",
        parsed: { error_severity: "LOG", timestamp: "2025-01-15T11:58:07.123456789Z" },
      },
      project: "default",
      timestamp: "2025-01-15T11:58:07.123456789Z",
    },
  ],
};

describe.each(BACKENDS)("Supabase's self-hosted Vector sinks into qes on $name", (fixture) => {
  let served: ServedFixture;
  const logs: Record<string, unknown>[] = [];
  beforeAll(async () => {
    served = await serveFixture(fixture, {}, ingestEnv({ QES_TEST_NOW: NOW }), logs);
  });
  afterAll(() => served.close());

  const query = async (path: string) => {
    const res = await fetch(`${served.url}/api/endpoints/query/${path}`, {
      headers: { "X-API-KEY": QUERY_TOKEN },
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it("takes each sink's batch as Vector sends it, and the built-in endpoints read them", async () => {
    const { url, backend } = served;
    for (const [source, events] of Object.entries(SINKS)) {
      const posted = await postLogs(url, source, vectorJsonBody(events), vectorHeaders(INGEST_TOKEN));
      expect(posted, source).toMatchObject({ status: 200, body: { accepted: events.length } });
      const rows = await runSql(
        backend,
        `select timestamp, event_message from \`${source}\` order by timestamp`,
      );
      expect(
        rows.map((r) => r.event_message),
        source,
      ).toEqual(events.map((e) => e.event_message));
    }
    // the times as sent, to the microsecond (Vector's nanoseconds cut, not rounded)
    const times = await runSql(backend, "select timestamp from `postgres.logs`");
    expect(times).toEqual([{ timestamp: 1736942287123456 }]);

    // logs.all: the edge (kong) rows of project `default`, newest first, each with its metadata;
    // its eight other CTEs compile over the shapes the other sinks brought
    const all = await query("logs.all?project=default");
    expect(all.status, JSON.stringify(all.body).slice(0, 400)).toBe(200);
    expect(all.body.result.map((r: any) => [r.timestamp, r.event_message.slice(0, 40)])).toEqual([
      [1736942283000000, "2025/01/15 11:58:03 [error] 1234#0: *5 c"],
      [1736942282000000, "172.18.0.1 - - [15/Jan/2025:11:58:02 +00"],
      [1736942281000000, "172.18.0.1 - - [15/Jan/2025:11:58:01 +00"],
    ]);
    expect(JSON.stringify(all.body.result[1].metadata)).toContain('"status_code":400');

    // usage.api-counts runs over them; it matches the project pattern against
    // metadata.request.url, which Supabase's kong remap does not set (its own query does the
    // same), so self-hosted edge events are counted in no bucket
    for (const interval of ["hourly", "daily", "minutely"]) {
      const usage = await query(`usage.api-counts?project=default&interval=${interval}`);
      expect(usage.status, interval).toBe(200);
      expect(usage.body.result, interval).toEqual([]);
    }
  });

  it("the same access line twice in a second (nginx's time has no fraction) is two requests, kept on a retry too", async () => {
    const { url, backend } = served;
    const line = {
      appname: "supabase-kong",
      event_message:
        '172.18.0.1 - - [15/Jan/2025:11:59:01 +0000] "GET /rest/v1/todos?select=* HTTP/1.1" 200 54 "-" "curl/8.5.0"',
      metadata: {
        request: {
          headers: { cf_connecting_ip: "172.18.0.1", referer: null, user_agent: "curl/8.5.0" },
          method: "GET",
          path: "/rest/v1/todos?select=*",
          protocol: "HTTP/1.1",
        },
        response: { status_code: 200 },
      },
      project: "repeats",
      timestamp: "2025-01-15T11:59:01Z",
    };
    const body = vectorJsonBody([line, line, line]);
    for (let attempt = 0; attempt < 2; attempt++) {
      const posted = await postLogs(url, "cloudflare.logs.prod", body, vectorHeaders(INGEST_TOKEN));
      expect(posted, `attempt ${attempt}`).toMatchObject({ status: 200, body: { accepted: 3 } });
      const all = await query("logs.all?project=repeats");
      expect(all.body.result, `attempt ${attempt}`).toHaveLength(3);
    }
    expect(
      await runSql(
        backend,
        "select count(distinct id) as n from `cloudflare.logs.prod` where project = 'repeats'",
      ),
    ).toEqual([{ n: 3 }]);
  });

  it("the stack's older sinks, the token in the uri's api_key, ingest too, and the token is not logged", async () => {
    const { url, backend } = served;
    // uri: 'http://analytics:4000/api/logs?source_name=gotrue.logs.prod&api_key=${LOGFLARE_API_KEY…}'
    const event = { ...SINKS["gotrue.logs.prod"]![0]!, timestamp: "2025-01-15T11:59:30.5Z" };
    const headers = vectorHeaders(INGEST_TOKEN);
    delete headers["X-API-KEY"];
    const res = await fetch(`${url}/api/logs?source_name=gotrue.logs.prod&api_key=${INGEST_TOKEN}`, {
      method: "POST",
      headers,
      body: vectorJsonBody([event]),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ accepted: 1 });
    expect(
      await runSql(
        backend,
        "select count(*) as n from `gotrue.logs.prod` where timestamp = '2025-01-15 11:59:30.5'",
      ),
    ).toEqual([{ n: 1 }]);
    expect(logs.length).toBeGreaterThan(0);
    expect(JSON.stringify(logs)).not.toContain(INGEST_TOKEN);
  });

  it("a retried batch (Vector sends the same bytes again after a timeout) stores nothing twice", async () => {
    const { url, backend } = served;
    const events = SINKS["cloudflare.logs.prod"]!;
    const before = await runSql(backend, "select count(*) as n from `cloudflare.logs.prod`");
    const again = await postLogs(
      url,
      "cloudflare.logs.prod",
      vectorJsonBody(events),
      vectorHeaders(INGEST_TOKEN),
    );
    expect(again).toMatchObject({ status: 200, body: { accepted: events.length } });
    expect(await runSql(backend, "select count(*) as n from `cloudflare.logs.prod`")).toEqual(before);
  });
});
