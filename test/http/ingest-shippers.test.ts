import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { INGEST_TOKEN, ingestEnv, postLogs, storedIds } from "./support/ingest.ts";

const json = (v: unknown) => JSON.stringify(v);
const at = "2025-01-15T11:00:00Z";

/** Bodies as real log shippers send them to POST /api/logs, byte for byte where it matters. */
describe.each(BACKENDS)("ingest of shippers' bodies on $name", (fixture) => {
  let served: ServedFixture;
  beforeAll(async () => {
    served = await serveFixture(fixture, {}, ingestEnv());
  });
  afterAll(() => served.close());

  it("Fluent Bit json_lines and json_stream, labelled application/json, gzip or not", async () => {
    const { url, backend } = served;
    const record = (id: string) => ({ date: 1736938800.123456, log: `line ${id}`, id, timestamp: at });
    // `format json_lines`: one object per line, a trailing newline (some versions send it as JSON)
    const lines = `${json(record("fl1"))}\n${json(record("fl2"))}\n`;
    expect(await postLogs(url, "fluentbit.lines", lines)).toMatchObject({
      status: 200,
      body: { accepted: 2 },
    });
    expect(
      await postLogs(url, "fluentbit.lines", gzipSync(`${json(record("fl3"))}\r\n`), {
        "Content-Encoding": "gzip",
      }),
    ).toMatchObject({ status: 200, body: { accepted: 1 } });
    expect(await storedIds(backend, "fluentbit.lines")).toEqual(["fl1", "fl2", "fl3"]);
    // `format json_stream`: objects back to back
    const stream = json(record("fs1")) + json(record("fs2")) + json(record("fs3"));
    expect(await postLogs(url, "fluentbit.stream", stream)).toMatchObject({
      status: 200,
      body: { accepted: 3 },
    });
    expect(await storedIds(backend, "fluentbit.stream")).toEqual(["fs1", "fs2", "fs3"]);
    // all or nothing still: a broken third line names itself and stores nothing
    const broken = await postLogs(
      url,
      "fluentbit.broken",
      `${json(record("fb1"))}\n${json(record("fb2"))}\n{"log":`,
    );
    expect(broken.status).toBe(400);
    expect(broken.body.error).toMatchObject({ code: "invalid_event", line: 3 });
    expect(broken.body.error.message).toMatch(/^event 2 \(line 3\)/);
    expect(await storedIds(backend, "fluentbit.broken")).toEqual([]);
  });

  it("Fluent Bit's http output as the README configures it: format json, gzip, the time as ISO 8601 `timestamp`", async () => {
    const { url, backend } = served;
    // `Format json` posts a JSON array; `json_date_key timestamp` and `json_date_format iso8601`
    // write each record's time with microseconds in place of the default `date` float
    const body = gzipSync(
      json([
        { timestamp: "2025-01-15T10:59:58.250125Z", log: "GET /health 200", stream: "stdout" },
        { timestamp: "2025-01-15T10:59:59.000001Z", log: "GET /ready 200", stream: "stdout" },
      ]),
    );
    expect(
      await postLogs(url, "fluentbit.json", body, {
        "Content-Type": "application/json",
        "Content-Encoding": "gzip",
      }),
    ).toMatchObject({ status: 200, body: { accepted: 2 } });
    expect(await runSql(backend, "select timestamp, log from `fluentbit.json` order by timestamp")).toEqual([
      { timestamp: 1736938798250125, log: "GET /health 200" },
      { timestamp: 1736938799000001, log: "GET /ready 200" },
    ]);
  });

  it("Logstash json_batch, curl --data-binary of a file with a trailing newline, a BOM, header variants", async () => {
    const { url, backend } = served;
    const ev = (id: string) => ({
      id,
      "@timestamp": "2025-01-15T11:00:00.000Z",
      message: "m",
      timestamp: at,
    });
    expect(await postLogs(url, "shipped.src", json([ev("ls1"), ev("ls2")]))).toMatchObject({ status: 200 });
    expect(
      await postLogs(url, "shipped.src", `${json(ev("cu1"))}\n${json(ev("cu2"))}\n`, {
        "Content-Type": "application/x-ndjson",
      }),
    ).toMatchObject({ status: 200, body: { accepted: 2 } });
    expect(await postLogs(url, "shipped.src", `\uFEFF${json([ev("bom1")])}\n`)).toMatchObject({
      status: 200,
    });
    expect(
      await postLogs(url, "shipped.src", json(ev("hdr1")), {
        "Content-Type": "Application/JSON; Charset=UTF-8",
      }),
    ).toMatchObject({ status: 200 });
    expect(
      await postLogs(url, "shipped.src", ` \n\t\r\n${json(ev("ws1"))}\r\n \n`, {
        "Content-Type": "application/x-ndjson; charset=utf-8",
      }),
    ).toMatchObject({ status: 200, body: { accepted: 1 } });
    expect(await postLogs(url, "shipped.src", "[]")).toMatchObject({ status: 200, body: { accepted: 0 } });
    // `cat a.ndjson b.ndjson | curl --data-binary @-` of two files saved with a byte order mark:
    // the second mark starts a line, as the multi-text JSON body already allowed
    const twoFiles = `\uFEFF${json(ev("cat1"))}\n\uFEFF${json(ev("cat2"))}\n`;
    for (const type of ["application/x-ndjson", "application/json"]) {
      expect(await postLogs(url, "shipped.src", twoFiles, { "Content-Type": type }), type).toMatchObject({
        status: 200,
        body: { accepted: 2 },
      });
    }
    expect(await storedIds(backend, "shipped.src")).toEqual([
      "bom1",
      "cat1",
      "cat2",
      "cu1",
      "cu2",
      "hdr1",
      "ls1",
      "ls2",
      "ws1",
    ]);
  });

  it("Fluent Bit's json_lines as its out_http labels it (application/x-ndjson), gzip, each json_date_format under `timestamp`", async () => {
    const { url, backend } = served;
    // flb_pack.c: iso8601 and java_sql_timestamp with microseconds, epoch (integer seconds),
    // epoch_ms, double; the records' own keys after it
    const lines = [
      '{"timestamp":"2025-01-15T10:59:58.000681Z","log":"iso8601","stream":"stdout"}',
      '{"timestamp":"2025-01-15 10:59:58.000682","log":"java_sql_timestamp","stream":"stdout"}',
      '{"timestamp":1736938799,"log":"epoch","stream":"stdout"}',
      '{"timestamp":1736938799683,"log":"epoch_ms","stream":"stdout"}',
      '{"timestamp":1736938799.684,"log":"double","stream":"stdout"}',
    ];
    const posted = await postLogs(url, "fluentbit.dates", gzipSync(`${lines.join("\n")}\n`), {
      "Content-Type": "application/x-ndjson",
      "Content-Encoding": "gzip",
      "User-Agent": "Fluent-Bit",
    });
    expect(posted).toMatchObject({ status: 200, body: { accepted: 5 } });
    expect(await runSql(backend, "select log, timestamp from `fluentbit.dates` order by timestamp")).toEqual([
      { log: "iso8601", timestamp: 1736938798000681 },
      { log: "java_sql_timestamp", timestamp: 1736938798000682 },
      { log: "epoch", timestamp: 1736938799000000 },
      { log: "epoch_ms", timestamp: 1736938799683000 },
      { log: "double", timestamp: 1736938799684000 },
    ]);
  });

  it("Logstash's http output as README configures it: format json_batch, http_compression (gzip), the token in headers", async () => {
    const { url, backend } = served;
    // LogStash::Json.dump of the batch's events (ECS mode: `event.original`, `log.file.path`)
    const body = gzipSync(
      JSON.stringify([
        {
          "@timestamp": "2025-01-15T10:59:57.125Z",
          "@version": "1",
          message: 'user "ada" signed in',
          event: { original: 'user "ada" signed in' },
          log: { file: { path: "/var/log/app.log" } },
          host: { name: "app-1" },
        },
      ]),
    );
    const posted = await postLogs(url, "logstash.gzip", body, {
      "Content-Type": "application/json",
      "Content-Encoding": "gzip",
      "User-Agent": "Manticore 0.9.1",
    });
    expect(posted).toMatchObject({ status: 200, body: { accepted: 1 } });
    expect(await runSql(backend, "select timestamp, event_message from `logstash.gzip`")).toEqual([
      { timestamp: 1736938797125000, event_message: 'user "ada" signed in' },
    ]);
  });

  it("Logstash's json_batch without `timestamp`: `@timestamp` is the event's time, `message` its event_message", async () => {
    const { url, backend } = served;
    // what Logstash's http output (format => json_batch) posts for a file input's line
    const body = JSON.stringify([
      {
        "@timestamp": "2025-01-15T10:59:58.250Z",
        "@version": "1",
        message: "worker ready",
        host: { name: "app-1" },
      },
      {
        "@timestamp": "2025-01-15T10:59:59.500Z",
        "@version": "1",
        message: "worker stopped",
        host: { name: "app-1" },
      },
    ]);
    expect(await postLogs(url, "logstash.src", body)).toMatchObject({ status: 200, body: { accepted: 2 } });
    const rows = await runSql(
      backend,
      "select timestamp, event_message from `logstash.src` order by timestamp",
    );
    expect(rows).toEqual([
      { timestamp: 1736938798250000, event_message: "worker ready" },
      { timestamp: 1736938799500000, event_message: "worker stopped" },
    ]);
  });

  it("a unix time in seconds, milliseconds or nanoseconds is that time, not one in January 1970", async () => {
    const { url, backend } = served;
    // Fluent Bit with `json_date_key timestamp` and `json_date_format epoch` / `double`,
    // Date.now(), microseconds, Go's UnixNano() as a number beyond 2^53 and as text
    const body =
      '[{"id":"s","timestamp":1736938800},{"id":"d","timestamp":1736938800.25},' +
      '{"id":"ms","timestamp":1736938800123},{"id":"us","timestamp":1736938800123456},' +
      '{"id":"ns","timestamp":1736938800123456789},{"id":"nstext","timestamp":"1736938800123456789"}]';
    expect(await postLogs(url, "unix.times", body)).toMatchObject({ status: 200, body: { accepted: 6 } });
    const rows = await runSql(backend, "select id, timestamp from `unix.times` order by id");
    expect(rows).toEqual([
      { id: "d", timestamp: 1736938800250000 },
      { id: "ms", timestamp: 1736938800123000 },
      { id: "ns", timestamp: 1736938800123456 },
      { id: "nstext", timestamp: 1736938800123456 },
      { id: "s", timestamp: 1736938800000000 },
      { id: "us", timestamp: 1736938800123456 },
    ]);
    // a fraction of a microsecond count is no time: 400 naming the event
    const odd = await postLogs(url, "unix.times", '[{"id":"ok"},{"id":"f","timestamp":1736938800123456.5}]');
    expect(odd.status).toBe(400);
    expect(odd.body.error.message).toMatch(/^event 1: "timestamp" is number 1736938800123456\.5/);
  });

  it("a shipper's setting that sends what qes cannot read is a 415 naming the header and the setting to use, nothing stored", async () => {
    const { url, backend } = served;
    const events = json([{ id: "u1", timestamp: at, event_message: "m" }]);
    // Content-Encoding as each shipper sends it (Vector's compression.rs content_encoding,
    // Fluent Bit's flb_http_set_content_encoding_*); the body is only labelled: the header is
    // refused before it is read
    for (const coding of ["zstd", "br"]) {
      const r = await postLogs(url, "unsupported.src", events, { "Content-Encoding": coding });
      expect(r, coding).toMatchObject({
        status: 415,
        body: {
          error: {
            code: "unsupported_media_type",
            param: "Content-Encoding",
            allowed: ["gzip", "deflate", "snappy", "identity"],
          },
        },
      });
      expect(r.body.error.message).toContain(`Content-Encoding "${coding}" is not supported`);
      expect(r.body.error.message).toContain("Vector: compression gzip, zlib or snappy");
      expect(r.headers.get("accept-encoding"), coding).toBe("gzip, deflate, snappy, identity");
    }
    // Content-Type as each sets it: Vector's codec text / raw_message (text/plain), Fluent Bit's
    // format msgpack, Logstash's format => message (its content_type) or form
    for (const [type, body] of [
      ["text/plain", "GET /health 200\nGET /ready 200"],
      ["application/msgpack", "\x81\xa3log\xa2hi"],
      ["application/x-www-form-urlencoded", "message=hi"],
    ] as const) {
      const r = await postLogs(url, "unsupported.src", body, { "Content-Type": type });
      expect(r, type).toMatchObject({
        status: 415,
        body: {
          error: {
            code: "unsupported_media_type",
            param: "Content-Type",
            allowed: ["application/json", "application/x-ndjson"],
          },
        },
      });
      expect(r.body.error.message).toContain(`Content-Type "${type}" is not accepted`);
      expect(r.body.error.message).toContain("Vector: encoding.codec json");
    }
    expect(await storedIds(backend, "unsupported.src")).toEqual([]);
  });

  it("Vector's compression snappy and Fluent Bit's compress snappy: one block of snappy's raw format", async () => {
    const { url, backend } = served;
    // 200 events as Vector's json codec writes them, compressed by libsnappy
    const block = readFileSync(new URL("./fixtures/vector-snappy-200.json.snappy", import.meta.url));
    const vector = await postLogs(url, "snappy.vector", block, {
      "Content-Type": "application/json",
      "Content-Encoding": "snappy",
    });
    expect(vector).toMatchObject({ status: 200, body: { accepted: 200 } });
    const ids = await storedIds(backend, "snappy.vector");
    expect(ids).toHaveLength(200);
    expect(ids[0]).toBe("sn000");
    expect(await runSql(backend, "select event_message from `snappy.vector` where id = 'sn007'")).toEqual([
      { event_message: "GET /rest/v1/todos?select=* HTTP/1.1 200 49" },
    ]);
    // Fluent Bit (format json, compress snappy): the same coding, a JSON array, its own headers
    const fluent = await postLogs(url, "snappy.fluentbit", block, {
      "Content-Type": "application/json",
      "Content-Encoding": "snappy",
      "User-Agent": "Fluent-Bit",
    });
    expect(fluent).toMatchObject({ status: 200, body: { accepted: 200 } });
    // a block declaring more than QES_INGEST_MAX_BYTES is a 413 before it is decoded; a corrupt one a 400
    const huge = await postLogs(url, "snappy.vector", Uint8Array.from([0x80, 0x80, 0x80, 0x80, 0x08, 0x00]), {
      "Content-Encoding": "snappy",
    });
    expect(huge).toMatchObject({ status: 413, body: { error: { code: "request_too_large" } } });
    const cut = await postLogs(url, "snappy.vector", block.subarray(0, 1000), {
      "Content-Encoding": "snappy",
    });
    expect(cut).toMatchObject({
      status: 400,
      body: { error: { code: "invalid_parameter", param: "Content-Encoding" } },
    });
    expect(await storedIds(backend, "snappy.fluentbit")).toHaveLength(200);
    expect(await storedIds(backend, "snappy.vector")).toHaveLength(200);
  });

  it("shippers' own auth settings: Bearer is the token, Basic a 401 that names it and where the token goes", async () => {
    const { url, backend } = served;
    const body = gzipSync(json([{ id: "a1", timestamp: at, message: "signed in" }]));
    const vector = { "Content-Type": "application/json", "Content-Encoding": "gzip", "X-API-KEY": "" };
    // Vector's `auth: {strategy: bearer, token: …}` (src/http.rs Auth::Bearer)
    expect(
      await postLogs(url, "auth.src", body, { ...vector, Authorization: `Bearer ${INGEST_TOKEN}` }),
    ).toMatchObject({ status: 200, body: { accepted: 1 } });
    // Vector's `strategy: basic`, Fluent Bit's http_user/http_passwd, Logstash's user/password
    const basic = `Basic ${Buffer.from(`qes:${INGEST_TOKEN}`).toString("base64")}`;
    const refused = await postLogs(url, "auth.src", body, { ...vector, Authorization: basic });
    expect(refused).toMatchObject({ status: 401, body: { error: { code: "unauthorized" } } });
    expect(refused.body.error.message).toBe(
      "Authorization: Basic is not accepted: send the access token in the X-API-KEY header, " +
        "Authorization: Bearer, or the api_key parameter.",
    );
    expect(refused.body.error.message).not.toContain(INGEST_TOKEN);
    // `token: "${QES_INGEST_TOKEN}"` of an unset variable: Bearer sent empty is no token, not another scheme
    const empty = await postLogs(url, "auth.src", body, { ...vector, Authorization: "Bearer " });
    expect(empty.status).toBe(401);
    expect(empty.body.error.message).toMatch(/^An access token is required/);
    // the query route reads tokens alike
    const query = await fetch(`${url}/api/endpoints/query/logs.all?project=default`, {
      headers: { Authorization: basic },
    });
    expect(query.status).toBe(401);
    expect(((await query.json()) as any).error.message).toMatch(/^Authorization: Basic is not accepted/);
    expect(await storedIds(backend, "auth.src")).toEqual(["a1"]);
  });

  it("Vector's start-up health check, HEAD of healthcheck.uri without the sink's headers, is 200 and stores nothing", async () => {
    const { url, backend } = served;
    // with `healthcheck.uri` set (src/sinks/http/config.rs `healthcheck`; none is sent without
    // it) Vector sends this before any batch and logs an error on any status but 200 (fatal
    // under `vector --require-healthy`); its `request.headers` (x-api-key) are not sent
    for (const query of ["source_name=vector.health", "source_name=vector.health&api_key=not-a-token"]) {
      const res = await fetch(`${url}/api/logs?${query}`, {
        method: "HEAD",
        headers: { "user-agent": "Vector/0.41.1 (x86_64-unknown-linux-gnu)" },
      });
      expect(res.status, query).toBe(200);
    }
    expect(await storedIds(backend, "vector.health")).toEqual([]);
    expect((await backend.schema()).sources["vector.health"]).toBeUndefined();
  });
});
