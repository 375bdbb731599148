import { type CompiledQuery, isQesError, type QesError } from "@qes/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresBackend, type PostgresBackend } from "../src/index.ts";
import { handQuery, scalar } from "./helpers.ts";
import { createPrivateCluster, type PrivateCluster } from "./private-cluster.ts";

const EDGE = "cloudflare.logs.prod";
const RUN = { maxRows: 10, timeoutMs: 5000 };

async function qesFailure(promise: Promise<unknown>): Promise<QesError> {
  try {
    await promise;
  } catch (e) {
    if (isQesError(e)) return e;
    throw e;
  }
  throw new Error("expected a failure");
}

describe("PostgreSQL down or restarting (private cluster, server time zone America/New_York)", () => {
  let cluster: PrivateCluster;
  let backend: PostgresBackend;
  let newest: CompiledQuery;

  beforeAll(async () => {
    cluster = await createPrivateCluster({ timezone: "America/New_York", log_timezone: "America/New_York" });
    await cluster.start();
    backend = createPostgresBackend({ url: cluster.url, schema: "qes", pool: 2, connectTimeoutMs: 2000 });
    await backend.init();
    await backend.load(EDGE, [
      '{"id":"a","timestamp":"2025-01-15T23:30:00.000001Z","event_message":"late","project":"p1"}',
      '{"id":"b","timestamp":"2025-01-15T01:00:00.5","event_message":"early","project":"p1"}',
    ]);
    const table = `"qes"."${(await backend.schema()).sources[EDGE]!.table}"`;
    newest = handQuery(
      `select id, "timestamp", date_trunc('day', "timestamp") as day from ${table} where project = $1 order by "timestamp" desc`,
      [scalar("id", "STRING"), scalar("timestamp", "TIMESTAMP"), scalar("day", "TIMESTAMP")],
      [["project", "STRING"]],
    );
  }, 120_000);

  afterAll(async () => {
    await backend?.close();
    await cluster?.destroy();
  });

  const expected = [
    { id: "a", timestamp: 1736983800000001, day: 1736899200000000 },
    { id: "b", timestamp: 1736902800500000, day: 1736899200000000 },
  ];

  it("the server runs in New York time, qes' loads and queries in UTC", async () => {
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    const { rows } = await client.query("show timezone");
    await client.end();
    expect(rows[0].TimeZone).toBe("America/New_York");
    expect((await backend.execute(newest, ["p1"], RUN)).rows).toEqual(expected);
  });

  it("answers backend_unavailable while the server is down and recovers by itself", async () => {
    // a statement running when the server stops
    const running = backend.execute(
      handQuery("select pg_sleep(10)::text as s", [scalar("s", "STRING")]),
      [],
      { maxRows: 1, timeoutMs: 30_000 },
    );
    running.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    await cluster.stop();
    expect((await qesFailure(running)).code).toBe("backend_unavailable");

    expect((await qesFailure(backend.execute(newest, ["p1"], RUN))).code).toBe("backend_unavailable");
    expect((await qesFailure(backend.health())).code).toBe("backend_unavailable");
    expect((await qesFailure(backend.load(EDGE, ['{"event_message":"lost"}']))).code).toBe(
      "backend_unavailable",
    );
    // the model last read stays in use (revalidated in the background, which fails quietly):
    // what runs against the server still says it is down
    const known = await backend.schema();
    await new Promise((r) => setTimeout(r, 600));
    expect(await backend.schema()).toBe(known);
    expect((await qesFailure(backend.execute(newest, ["p1"], RUN))).code).toBe("backend_unavailable");

    await cluster.start();
    // the same backend object, no restart of qes: the first query after the restart succeeds
    expect((await backend.execute(newest, ["p1"], RUN)).rows).toEqual(expected);
    await expect(backend.health()).resolves.toBeUndefined();
    await backend.load(EDGE, [
      '{"id":"c","timestamp":"2025-01-14T00:00:00Z","event_message":"after","project":"p1"}',
    ]);
    expect((await backend.execute(newest, ["p1"], RUN)).rows).toHaveLength(3);
  });

  it("a quick restart costs no query: connections that died idle in the pool are replaced, not failed", async () => {
    // both pooled connections open and idle
    await Promise.all([backend.execute(newest, ["p1"], RUN), backend.execute(newest, ["p1"], RUN)]);
    await cluster.stop();
    await cluster.start();
    const after = await Promise.allSettled([
      backend.execute(newest, ["p1"], RUN),
      backend.execute(newest, ["p1"], RUN),
      backend.execute(newest, ["p1"], RUN),
    ]);
    expect(after.map((r) => (r.status === "fulfilled" ? "ok" : (r.reason as QesError).code))).toEqual([
      "ok",
      "ok",
      "ok",
    ]);
  });

  it("init while the server is down is backend_unavailable", async () => {
    await cluster.stop();
    try {
      const other = createPostgresBackend({
        url: cluster.url,
        schema: "qes",
        pool: 1,
        connectTimeoutMs: 1000,
      });
      expect((await qesFailure(other.init())).code).toBe("backend_unavailable");
      await other.close();
    } finally {
      await cluster.start();
    }
  });
});
