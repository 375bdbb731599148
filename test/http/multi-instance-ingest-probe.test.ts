import { describe, expect, it } from "vitest";
import { createPostgresBackend, dropPostgresStorage } from "../../packages/backend-postgres/src/index.ts";
import { event, postLogs, QUERY_TOKEN } from "./support/ingest.ts";
import { serversOnOneStore } from "./support/ingest-workers.ts";
import { TEST_POSTGRES_URL } from "./support/stores.ts";

const json = (v: unknown) => JSON.stringify(v);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** consumer SQL over logs.all on `url`: 200 and its rows */
async function ask(url: string, sql: string): Promise<unknown[]> {
  const res = await fetch(
    `${url}/api/endpoints/query/logs.all?project=multi&sql=${encodeURIComponent(sql)}`,
    { headers: { "X-API-KEY": QUERY_TOKEN } },
  );
  const body = (await res.json()) as any;
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.result;
}

/**
 * Two qes servers (instances) on one PostgreSQL schema, as behind a load balancer: what one
 * ingests, the other answers; the same request sent to both is stored once.
 */
describe("POST /api/logs on two instances sharing one PostgreSQL schema", () => {
  const schema = `qes_http_multi_probe_${process.pid}_${Date.now().toString(36)}`;
  const { servers } = serversOnOneStore(
    async () => {
      const backend = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 2 });
      await backend.init();
      return backend;
    },
    () => dropPostgresStorage(TEST_POSTGRES_URL, schema),
  );

  it("a field ingested on A is read by a query on B one second later, after B sat idle", async () => {
    const [a, b] = servers as [NonNullable<(typeof servers)[0]>, NonNullable<(typeof servers)[0]>];
    const sql =
      "select m.idle_field from edge_logs cross join unnest(metadata) as m where m.idle_field is not null";
    expect(await ask(b.url, sql)).toEqual([]);
    // B read the model last more than a second ago
    await sleep(1_100);
    const ev = event("idle1", "x", { project: "multi", metadata: { idle_field: "seen" } });
    expect((await postLogs(a.url, "cloudflare.logs.prod", json([ev]))).status).toBe(200);
    await sleep(1_000);
    // B's first query after the commit: it answered from the model of before it (stale while
    // revalidating), so a field A added a second earlier read as NULL
    expect(await ask(b.url, sql)).toEqual([{ idle_field: "seen" }]);
  });
});
