import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { EndpointRegistry } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, type BackendHandle } from "../support/backends.ts";
import { builtinRegistry, ndjson, runEndpoint } from "../support/run-endpoint.ts";

// Issue 11: the reference platform's own stored queries for `logs.all` and `usage.api-counts`
// (Logflare's priv/supabase/endpoints) use constructs qes must read — string-declared time
// parameters cast in SQL, CASE … THEN TRUE ELSE …, unread CTEs ending in ORDER BY, a one-row CTE
// read back as `dates[0]`, LEFT JOIN UNNEST … ON TRUE, trailing commas before FROM, a final `;`.
// ./reference-platform holds queries written afresh with those constructs (their SQL is not
// copied); declared `string` as that platform binds them, they return the built-ins' rows.

const DIR = join(fileURLToPath(new URL(".", import.meta.url)), "reference-platform");
const NOW = "2025-01-15T12:00:00Z";

function edge(id: string, ts: string, project: string, path: string) {
  return {
    id,
    timestamp: ts,
    project,
    event_message: `GET | 200 | ${path}`,
    metadata: {
      request: { method: "GET", path, url: `https://${project}.supabase.co${path}` },
      response: { status_code: 200 },
    },
  };
}

const EDGE_EVENTS = [
  edge("a1", "2025-01-15T11:59:00Z", "alpha", "/rest/v1/todos"),
  edge("a2", "2025-01-15T11:30:00.000001Z", "alpha", "/storage/v1/object/a.png"),
  edge("a3", "2025-01-15T11:30:00Z", "alpha", "/auth/v1/token"),
  edge("a4", "2025-01-15T11:05:00Z", "alpha", "/realtime/v1/websocket"),
  edge("a5", "2025-01-15T10:40:00Z", "alpha", "/rest/v1/rpc/storage_size"),
  edge("a6", "2025-01-14T09:00:00Z", "alpha", "/functions/v1/hello"),
  edge("a7", "2025-01-01T00:00:00Z", "alpha", "/rest/v1/old"),
  edge("b1", "2025-01-15T11:58:00Z", "beta", "/rest/v1/todos"),
];

describe.each(BACKENDS)("the reference platform's stored-query constructs on $name", (fixture) => {
  let handle: BackendHandle;
  let registry: EndpointRegistry;

  beforeAll(async () => {
    handle = await fixture.create();
    registry = await builtinRegistry(DIR);
    await handle.backend.load("cloudflare.logs.prod", ndjson(EDGE_EVENTS));
    await handle.backend.load(
      "postgres.logs",
      ndjson([{ id: "p1", timestamp: "2025-01-15T11:00:00Z", project: "alpha", event_message: "pg" }]),
    );
  });
  afterAll(async () => {
    await handle?.dispose();
  });

  const run = async (name: string, params: Record<string, string | undefined>) =>
    (await runEndpoint(handle.backend, registry, name, params, { now: NOW })).rows;

  describe("log search, parameters declared string", () => {
    it.each([
      ["no time range", { project: "alpha" }, ["a1", "a2", "a3", "a4", "a5", "a6", "a7"]],
      [
        "empty bounds",
        { project: "alpha", iso_timestamp_start: "", iso_timestamp_end: "" },
        ["a1", "a2", "a3", "a4", "a5", "a6", "a7"],
      ],
      [
        "an exclusive start and an inclusive end, microsecond-exact",
        {
          project: "alpha",
          iso_timestamp_start: "2025-01-15T11:30:00Z",
          iso_timestamp_end: "2025-01-15T11:30:00.000001Z",
        },
        ["a2"],
      ],
      ["another project", { project: "beta" }, ["b1"]],
    ] as const)("%s: the built-in's rows, newest first", async (_name, params, ids) => {
      const reference = await run("logs-search", params);
      expect(reference.map((r) => r.id)).toEqual(ids);
      expect(reference).toEqual(await run("logs.all", params));
    });
  });

  describe("request counts, parameters declared string", () => {
    it("hourly: one bucket from now minus one hour, as the built-in answers", async () => {
      const reference = await run("request-counts", { interval: "hourly", project: "alpha" });
      expect(reference).toEqual([
        {
          timestamp: "2025-01-15T11:00:00",
          total_rest_requests: 1,
          total_storage_requests: 1,
          total_auth_requests: 1,
          total_realtime_requests: 1,
        },
      ]);
      expect(reference).toEqual(await run("usage.api-counts", { interval: "hourly", project: "alpha" }));
    });

    it.each(["daily", "minutely"])("%s: the built-in's rows", async (interval) => {
      const reference = await run("request-counts", { interval, project: "alpha" });
      expect(reference.length).toBeGreaterThan(0);
      expect(reference).toEqual(await run("usage.api-counts", { interval, project: "alpha" }));
    });

    it("daily: buckets of days, a rest and storage request counted in both", async () => {
      expect(await run("request-counts", { interval: "daily", project: "alpha" })).toEqual([
        {
          timestamp: "2025-01-14T00:00:00",
          total_rest_requests: 0,
          total_storage_requests: 0,
          total_auth_requests: 0,
          total_realtime_requests: 0,
        },
        {
          timestamp: "2025-01-15T00:00:00",
          total_rest_requests: 2,
          total_storage_requests: 2,
          total_auth_requests: 1,
          total_realtime_requests: 1,
        },
      ]);
    });
  });
});
