import { readFileSync } from "node:fs";
import { deflateSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { runSql } from "../support/run-sql.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { INGEST_TOKEN, ingestEnv, postLogs, storedIds } from "./support/ingest.ts";
import {
  vectorEstimatedSize,
  vectorHeaders,
  vectorJsonBody,
  vectorNdjsonBody,
} from "./support/vector-body.ts";

const at = (s: number) =>
  `2025-01-15T11:${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}.123456789Z`;

/** Vector's `http` sink's other encodings of one batch, each as its encoder and config.rs write it */
describe.each(BACKENDS)("Vector's http sink encodings on $name", (fixture) => {
  let served: ServedFixture;
  beforeAll(async () => {
    served = await serveFixture(fixture, {}, ingestEnv());
  });
  afterAll(() => served.close());

  const events = (prefix: string) =>
    [0, 1, 2].map((i) => ({ id: `${prefix}${i}`, message: `line ${i}`, timestamp: at(i), host: "web-1" }));

  it("framing newline_delimited (application/x-ndjson, no last newline) with compression zlib (deflate)", async () => {
    const body = deflateSync(vectorNdjsonBody(events("nd")));
    const headers = { ...vectorHeaders(INGEST_TOKEN, "deflate"), "Content-Type": "application/x-ndjson" };
    expect(await postLogs(served.url, "vector.ndjson", body, headers)).toMatchObject({
      status: 200,
      body: { accepted: 3 },
    });
    expect(
      await runSql(served.backend, "select id, event_message from `vector.ndjson` order by timestamp"),
    ).toEqual([
      { id: "nd0", event_message: "line 0" },
      { id: "nd1", event_message: "line 1" },
      { id: "nd2", event_message: "line 2" },
    ]);
  });

  it("codec native_json: no Content-Type, one event a line, each wrapped in `log` as Vector's native form has it", async () => {
    const body = events("nj")
      .map((e) => JSON.stringify({ log: e }))
      .join("\n");
    // Vector sets no Content-Type for native_json; fetch would add text/plain to a string body
    const headers = { ...vectorHeaders(INGEST_TOKEN), "Content-Type": "" };
    expect(await postLogs(served.url, "vector.native", body, headers)).toMatchObject({
      status: 200,
      body: { accepted: 3 },
    });
    const rows = await runSql(served.backend, "select log.id as id from `vector.native` order by log.id");
    expect(rows).toEqual([{ id: "nj0" }, { id: "nj1" }, { id: "nj2" }]);
  });

  it("payload_prefix '{\"batch\":' and payload_suffix '}' around the JSON array", async () => {
    const body = gzipSync(`{"batch":${vectorJsonBody(events("pb"))}}`);
    expect(
      await postLogs(served.url, "vector.batch", body, vectorHeaders(INGEST_TOKEN, "gzip")),
    ).toMatchObject({
      status: 200,
      body: { accepted: 3 },
    });
    expect(await storedIds(served.backend, "vector.batch")).toEqual(["pb0", "pb1", "pb2"]);
  });
});

/** the `http` sink of README's "Ship logs to qes", as YAML text */
function readmeVectorSink(): string {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const block = /```yaml\n(sinks:\n[\s\S]*?type: http[\s\S]*?)```/.exec(readme)?.[1];
  if (block === undefined) throw new Error("README has no Vector http sink");
  return block;
}

function setting(yaml: string, key: string): string {
  const value = new RegExp(`^\\s*${key}:\\s*("[^"]*"|\\S+)`, "m").exec(yaml)?.[1];
  if (value === undefined) throw new Error(`README's Vector sink has no ${key}`);
  return value.replace(/^"|"$/g, "");
}

/**
 * A full batch of README's Vector sink against the default `QES_INGEST_MAX_BYTES`. Vector fills
 * `batch.max_bytes` by its estimate of each event's JSON, which does not count escapes: a batch of
 * events whose text holds quotes (a JSON line logged as a message, as GoTrue's and Storage's are
 * in Supabase's stack) is larger on the wire. A body past the limit is a 413, which Vector does
 * not retry: the batch is dropped.
 */
describe("README's Vector sink: a full batch of escape-heavy events fits QES_INGEST_MAX_BYTES", () => {
  let served: ServedFixture;
  beforeAll(async () => {
    const duckdb = BACKENDS.find((b) => b.name === "duckdb");
    if (!duckdb) throw new Error("no duckdb fixture");
    served = await serveFixture(duckdb, {}, ingestEnv());
  });
  afterAll(() => served.close());

  it("is posted whole, as configured (uri, codec, compression, header), and every event stored", async () => {
    const sink = readmeVectorSink();
    const uri = new URL(setting(sink, "uri"));
    expect(uri.pathname).toBe("/api/logs");
    const source = uri.searchParams.get("source_name")!;
    expect(setting(sink, "codec")).toBe("json");
    const compression = setting(sink, "compression");
    expect(["gzip", "zlib"]).toContain(compression);
    expect(sink).toMatch(/headers:\n\s+x-api-key: /);
    const maxBytes = Number(setting(sink, "max_bytes"));
    const maxEvents = Number(setting(sink, "max_events"));

    // GoTrue's line as Supabase's auth remap leaves it: the JSON text kept, its fields merged into metadata
    const batch: Record<string, unknown>[] = [];
    let estimated = 0;
    for (let i = 0; batch.length < maxEvents; i++) {
      const line = {
        component: "api",
        level: "info",
        method: "GET",
        msg: "request completed",
        path: `/user?i=${i}`,
        referer: "http://localhost:3000",
        remote_addr: "172.18.0.8",
        request_id: `req-${i}`,
        status: 200,
        time: "2025-01-15T11:58:02Z",
      };
      const event = {
        appname: "supabase-auth",
        event_message: JSON.stringify(line),
        metadata: { ...line, timestamp: line.time },
        project: "default",
        timestamp: at(i % 3600),
      };
      const size = vectorEstimatedSize(event);
      if (estimated + size > maxBytes) break;
      estimated += size;
      batch.push(event);
    }
    const text = vectorJsonBody(batch);
    const body = compression === "gzip" ? gzipSync(text) : deflateSync(text);
    const posted = await postLogs(
      served.url,
      source,
      body,
      vectorHeaders(INGEST_TOKEN, compression === "gzip" ? "gzip" : "deflate"),
    );
    expect(posted.status, `${text.length} bytes: ${JSON.stringify(posted.body).slice(0, 300)}`).toBe(200);
    expect(posted.body).toEqual({ accepted: batch.length });
    expect(await runSql(served.backend, `select count(*) as n from \`${source}\``)).toEqual([
      { n: batch.length },
    ]);
  }, 120_000);
});
