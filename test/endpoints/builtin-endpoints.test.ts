import type { EndpointRegistry, WireValue } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, type BackendHandle } from "../support/backends.ts";
import {
  builtinRegistry,
  FIXTURE_ENDPOINTS_DIR,
  micros,
  ndjson,
  runEndpoint,
} from "../support/run-endpoint.ts";

// Every rule of SPEC.md §4.2–§4.3 and DESIGN.md §4–§5, on hand-made events, on every backend.
// Expected rows are written from the spec, never taken from a backend's output.

const NOW = "2025-01-15T12:00:00Z";

function edge(id: string, ts: string, project: string, path: string, extra: object = {}) {
  return {
    id,
    timestamp: ts,
    project,
    event_message: `GET | 200 | 203.0.113.7 | ${path}`,
    metadata: {
      request: {
        method: "GET",
        path,
        url: `https://${project}.supabase.co${path}`,
        headers: { x_real_ip: "203.0.113.7" },
      },
      response: { status_code: 200 },
    },
    ...extra,
  };
}

describe.each(BACKENDS)("built-in endpoints on $name", (fixture) => {
  let handle: BackendHandle;
  let registry: EndpointRegistry;

  beforeAll(async () => {
    handle = await fixture.create();
    registry = await builtinRegistry(FIXTURE_ENDPOINTS_DIR);
    const b = handle.backend;
    // logs.all: project "alpha" has 150 edge events one minute apart, newest at 11:59.
    const alpha = Array.from({ length: 150 }, (_, i) => {
      const ts = new Date(Date.parse("2025-01-15T12:00:00Z") - (i + 1) * 60_000).toISOString();
      return edge(`alpha-${String(i).padStart(3, "0")}`, ts, "alpha", "/rest/v1/todos");
    });
    await b.load(
      "cloudflare.logs.prod",
      ndjson([
        ...alpha,
        // boundaries, microsecond-exact
        edge("b-start", "2025-01-10T00:00:00.000001Z", "bounds", "/rest/v1/a"),
        edge("b-after-start", "2025-01-10T00:00:00.000002Z", "bounds", "/rest/v1/a"),
        edge("b-end", "2025-01-10T00:00:10.000005Z", "bounds", "/rest/v1/a"),
        edge("b-after-end", "2025-01-10T00:00:10.000006Z", "bounds", "/rest/v1/a"),
        // an event without metadata
        {
          id: "nometa",
          timestamp: "2025-01-11T00:00:00Z",
          project: "bare",
          event_message: "no metadata here",
        },
      ]),
    );
    // 2^53 + 1 written as text: a JS number literal would already have lost it
    await b.load("cloudflare.logs.prod", [
      '{"id":"big","timestamp":"2025-01-11T00:00:01Z","project":"bare","event_message":"big","metadata":{"request":{"path":"/x","url":"u"},"counter":9007199254740993}}',
    ]);
    // the same project in other sources: never returned by logs.all
    await b.load(
      "postgres.logs",
      ndjson([{ id: "pg-1", timestamp: "2025-01-15T11:59:30Z", project: "alpha", event_message: "pg" }]),
    );
    await b.load(
      "gotrue.logs.prod",
      ndjson([
        {
          id: "auth-1",
          timestamp: "2025-01-15T11:59:40Z",
          project: "alpha",
          event_message: "{}",
          metadata: { status: 200, path: "/token", msg: "ok" },
        },
        {
          id: "auth-2",
          timestamp: "2025-01-15T11:59:41Z",
          project: "alpha",
          event_message: "{}",
          metadata: { status: 401, path: "/token", msg: "bad", error: "invalid" },
        },
        {
          id: "auth-3",
          timestamp: "2025-01-15T11:59:42Z",
          project: "alpha",
          event_message: "{}",
          metadata: { status: 500, path: "/user", msg: "boom" },
        },
        {
          id: "auth-4",
          timestamp: "2025-01-15T11:59:43Z",
          project: "beta",
          event_message: "{}",
          metadata: { status: 503, path: "/user" },
        },
        {
          id: "auth-5",
          timestamp: "2025-01-15T11:59:44Z",
          project: "alpha",
          event_message: "{}",
          metadata: { path: "/health" },
        },
      ]),
    );
    // usage.api-counts: project "usage1" (now = 12:00:00)
    const u = (id: string, ts: string, path: string, project = "usage1") => edge(id, ts, project, path);
    await b.load(
      "cloudflare.logs.prod",
      ndjson([
        u("u1", "2025-01-15T11:10:00Z", "/rest/v1/todos"),
        u("u2", "2025-01-15T11:10:30Z", "/storage/v1/object"),
        u("u3", "2025-01-15T11:59:59.999999Z", "/auth/v1/token"),
        u("u4", "2025-01-15T11:20:00Z", "/realtime/v1/websocket"),
        u("u5", "2025-01-15T11:20:01Z", "/rest/v1/rpc/storage_size"), // counts as rest and storage
        u("u6", "2025-01-15T11:30:00Z", "/functions/v1/hello"), // none of the four: a row of zeros
        u("u7", "2025-01-15T11:00:00Z", "/rest/v1/at-window-start"), // now - 1h: included
        u("u8", "2025-01-15T10:59:59.999999Z", "/rest/v1/before-window"), // excluded hourly
        u("u9", "2025-01-10T08:00:00Z", "/auth/v1/signup"), // daily only
        u("u10", "2025-01-08T11:59:59Z", "/auth/v1/too-old"), // before the 7-day window
        u("v1", "2025-01-15T11:40:00Z", "/rest/v1/other", "usage2"),
      ]),
    );
  });

  afterAll(async () => {
    await handle?.dispose();
  });

  const run = (name: string, params: Record<string, string | undefined>, now = NOW) =>
    runEndpoint(handle.backend, registry, name, params, { now });

  describe("logs.all", () => {
    it("returns at most 100 edge rows of the project, newest first", async () => {
      const { rows } = await run("logs.all", { project: "alpha" });
      expect(rows).toHaveLength(100);
      expect(rows.map((r) => r.id)).toEqual(
        Array.from({ length: 100 }, (_, i) => `alpha-${String(i).padStart(3, "0")}`),
      );
      expect(Object.keys(rows[0]!)).toEqual(["id", "timestamp", "event_message", "metadata"]);
    });

    it("is addressed by UUID as well as by name", async () => {
      const byId = await run(registry.get("logs.all")!.id, { project: "alpha" });
      expect(byId.rows[0]!.id).toBe("alpha-000");
    });

    it("never returns other sources' rows", async () => {
      const { rows } = await run("logs.all", {
        project: "alpha",
        iso_timestamp_start: "2025-01-15T11:58:00Z",
      });
      expect(rows.map((r) => r.id)).toEqual(["alpha-000"]);
    });

    it("treats the start as exclusive and the end as inclusive, to the microsecond", async () => {
      const { rows } = await run("logs.all", {
        project: "bounds",
        iso_timestamp_start: "2025-01-10T00:00:00.000001Z",
        iso_timestamp_end: "2025-01-10T00:00:10.000005Z",
      });
      expect(rows.map((r) => r.id)).toEqual(["b-end", "b-after-start"]);
    });

    it("ignores empty or absent bounds", async () => {
      const empty = await run("logs.all", {
        project: "bounds",
        iso_timestamp_start: "",
        iso_timestamp_end: "",
      });
      const absent = await run("logs.all", { project: "bounds" });
      expect(empty.rows.map((r) => r.id)).toEqual(["b-after-end", "b-end", "b-after-start", "b-start"]);
      expect(absent.rows).toEqual(empty.rows);
    });

    it("accepts a bound with a zone offset", async () => {
      const { rows } = await run("logs.all", {
        project: "bounds",
        iso_timestamp_end: "2025-01-10T01:00:10.000005+01:00",
      });
      expect(rows.map((r) => r.id)).toEqual(["b-end", "b-after-start", "b-start"]);
    });

    it("gives wire values: µs timestamps and metadata as one-element arrays", async () => {
      const { rows } = await run("logs.all", {
        project: "bounds",
        iso_timestamp_start: "2025-01-10T00:00:10.000005Z",
      });
      expect(rows).toEqual([
        {
          id: "b-after-end",
          timestamp: Number(micros("2025-01-10T00:00:10.000006Z")),
          event_message: "GET | 200 | 203.0.113.7 | /rest/v1/a",
          metadata: [
            {
              request: [
                {
                  method: "GET",
                  path: "/rest/v1/a",
                  url: "https://bounds.supabase.co/rest/v1/a",
                  headers: [{ x_real_ip: "203.0.113.7" }],
                },
              ],
              response: [{ status_code: 200 }],
            },
          ],
        },
      ]);
      expect(String(rows[0]!.timestamp)).toHaveLength(16);
    });

    it("returns events without metadata with an empty repeated record, and huge integers exactly", async () => {
      const { rows } = await run("logs.all", { project: "bare" });
      const byId = Object.fromEntries(rows.map((r) => [r.id as string, r]));
      expect(byId.nometa!.metadata).toEqual([]);
      const meta = byId.big!.metadata as Array<Record<string, WireValue>>;
      expect(meta[0]!.counter).toBe("9007199254740993");
    });

    it("names unknown parameters as ignored", async () => {
      const { ignored } = await run("logs.all", { project: "alpha", colour: "blue" });
      expect(ignored).toEqual(["colour"]);
    });
  });

  describe("usage.api-counts", () => {
    const bucket = (iso: string) => iso;
    it("hourly: ascending hour buckets from now minus one hour, split by path", async () => {
      const { rows } = await run("usage.api-counts", { project: "usage1", interval: "hourly" });
      expect(rows).toEqual([
        {
          timestamp: bucket("2025-01-15T11:00:00"),
          total_rest_requests: 3, // u1, u5, u7 (u7 sits exactly at the window start)
          total_storage_requests: 2, // u2, u5 (one request, two counters)
          total_auth_requests: 1, // u3
          total_realtime_requests: 1, // u4
        },
      ]);
    });

    it("minutely: minute buckets, and a row of zeros for requests matching none of the four", async () => {
      const { rows } = await run("usage.api-counts", { project: "usage1", interval: "minutely" });
      const z = {
        total_rest_requests: 0,
        total_storage_requests: 0,
        total_auth_requests: 0,
        total_realtime_requests: 0,
      };
      expect(rows).toEqual([
        { ...z, timestamp: "2025-01-15T11:00:00", total_rest_requests: 1 },
        { ...z, timestamp: "2025-01-15T11:10:00", total_rest_requests: 1, total_storage_requests: 1 },
        {
          ...z,
          timestamp: "2025-01-15T11:20:00",
          total_rest_requests: 1,
          total_storage_requests: 1,
          total_realtime_requests: 1,
        },
        { ...z, timestamp: "2025-01-15T11:30:00" },
        { ...z, timestamp: "2025-01-15T11:59:00", total_auth_requests: 1 },
      ]);
    });

    it("daily: day buckets over seven days", async () => {
      const { rows } = await run("usage.api-counts", { project: "usage1", interval: "daily" });
      expect(rows).toEqual([
        {
          timestamp: "2025-01-10T00:00:00",
          total_rest_requests: 0,
          total_storage_requests: 0,
          total_auth_requests: 1,
          total_realtime_requests: 0,
        },
        {
          timestamp: "2025-01-15T00:00:00",
          total_rest_requests: 4,
          total_storage_requests: 2,
          total_auth_requests: 1,
          total_realtime_requests: 1,
        },
      ]);
    });

    it("treats the project as a regular expression matched inside the URL", async () => {
      const both = await run("usage.api-counts", { project: "usage[12]", interval: "hourly" });
      expect(both.rows).toHaveLength(1);
      expect(both.rows[0]!.total_rest_requests).toBe(4); // u1, u5, u7 and v1
      const anchored = await run("usage.api-counts", { project: "^https://usage2\\.", interval: "hourly" });
      expect(anchored.rows[0]!.total_rest_requests).toBe(1);
    });

    it("refuses an interval outside the allowed values, naming them", async () => {
      await expect(run("usage.api-counts", { project: "usage1", interval: "weekly" })).rejects.toMatchObject({
        code: "invalid_parameter",
        param: "interval",
        allowed: ["hourly", "daily", "minutely"],
      });
    });

    it("refuses a project pattern that is not a valid regular expression", async () => {
      await expect(run("usage.api-counts", { project: "(usage", interval: "hourly" })).rejects.toMatchObject({
        code: "invalid_parameter",
        param: "project",
      });
    });
  });

  describe("an operator's endpoint (QES_ENDPOINTS_DIR)", () => {
    it("runs auth errors with `cross join unnest(metadata) as metadata` and a numeric comparison", async () => {
      const { rows } = await run("auth.errors", { project: "alpha" });
      expect(rows.map((r) => [r.id, r.status])).toEqual([
        ["auth-3", 500],
        ["auth-2", 401],
      ]);
      expect(rows[1]).toMatchObject({ path: "/token", msg: "bad", error: "invalid" });
    });
  });
});
