import { describe, expect, it } from "vitest";
import { createPostgresBackend, dropPostgresStorage } from "../../packages/backend-postgres/src/index.ts";
import { runSql } from "../support/run-sql.ts";
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

/** two servers on one PostgreSQL schema of its own (dropped after the suite) */
function instancesOnOneSchema(prefix: string) {
  const schema = `${prefix}_${process.pid}_${Date.now().toString(36)}`;
  return serversOnOneStore(
    async () => {
      const backend = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 2 });
      await backend.init();
      return backend;
    },
    () => dropPostgresStorage(TEST_POSTGRES_URL, schema),
  );
}

/**
 * Two qes servers (instances) on one PostgreSQL schema, as behind a load balancer: what one
 * ingests, the other answers; the same request sent to both is stored once.
 */
describe("POST /api/logs on two instances sharing one PostgreSQL schema", () => {
  const { servers } = instancesOnOneSchema("qes_http_multi_probe");

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

describe("POST /api/logs at once on two instances sharing one PostgreSQL schema", () => {
  const { backends, servers } = instancesOnOneSchema("qes_http_multi_race");
  const urls = () => servers.map((s) => s.url);

  it("the same body to both at once, again and again, into a source both create: stored once, with ids and without", async () => {
    for (let round = 0; round < 6; round++) {
      const source = `race.new${round}`;
      const body = json([
        event(`r${round}-a`, "with id"),
        event(`r${round}-b`, "with id"),
        { timestamp: "2025-01-15T11:00:00Z", event_message: `no id ${round}` },
        { event_message: `no id, no time ${round}`, metadata: { n: round } },
      ]);
      for (let retry = 0; retry < 3; retry++) {
        const posted = await Promise.all(urls().map((u) => postLogs(u, source, body)));
        expect(posted.map((p) => p.status)).toEqual([200, 200]);
      }
      const rows = await runSql(backends[0]!, `select id, event_message from \`${source}\``);
      expect(rows.length).toBe(4);
      expect(new Set(rows.map((r) => r.id)).size).toBe(4);
    }
  });

  it("many new sources posted to both at once, in every order (group commits of several sources): all 200, each event once", async () => {
    const sources = Array.from({ length: 6 }, (_, i) => `many.s${i}`);
    const posts: Promise<{ status: number; body: any }>[] = [];
    for (let k = 0; k < 4; k++)
      for (const [i, u] of urls().entries()) {
        const order = i === 0 ? sources : [...sources].reverse();
        for (const source of order) posts.push(postLogs(u, source, json([event(`${source}-${k}`, "m")])));
      }
    const posted = await Promise.all(posts);
    expect(posted.filter((p) => p.status !== 200).map((p) => p.body)).toEqual([]);
    await sleep(1_000);
    for (const source of sources) {
      const rows = await runSql(backends[1]!, `select id from \`${source}\` order by id`);
      expect(rows.map((r) => r.id)).toEqual([0, 1, 2, 3].map((k) => `${source}-${k}`));
    }
  });

  it("conflicting widenings of one new field at once (a number on A, an object on B): both stored, read back", async () => {
    const source = "race.conflict";
    for (let round = 0; round < 4; round++) {
      const field = `f${round}`;
      const posted = await Promise.all([
        postLogs(urls()[0]!, source, json([event(`n${round}`, "n", { metadata: { [field]: 42 } })])),
        postLogs(
          urls()[1]!,
          source,
          json([event(`o${round}`, "o", { metadata: { [field]: { deep: "x" } } })]),
        ),
      ]);
      expect(posted.map((p) => p.status)).toEqual([200, 200]);
    }
    // visible within a second on every instance
    await sleep(1_000);
    for (let round = 0; round < 4; round++) {
      const rows = await runSql(
        backends[1]!,
        `select t.id, m.f${round} as v from \`${source}\` as t cross join unnest(t.metadata) as m where t.id in ('n${round}', 'o${round}') order by t.id`,
      );
      // widened to STRING: the number's text and the object's JSON text
      expect(rows).toEqual([
        { id: `n${round}`, v: "42" },
        { id: `o${round}`, v: '{"deep":"x"}' },
      ]);
    }
  });
});

describe("queries on one instance while another widens", () => {
  const { servers } = instancesOnOneSchema("qes_http_multi_widen");

  it("a query B compiled for a column A just retyped (INT64 to STRING) is answered, not refused", async () => {
    const [a, b] = [servers[0]!, servers[1]!];
    const coded = (id: string, code: unknown) => event(id, "x", { project: "multi", metadata: { code } });
    expect((await postLogs(a.url, "cloudflare.logs.prod", json([coded("c1", 500)]))).status).toBe(200);
    await sleep(1_000);
    const sql = "select count(*) as n from edge_logs cross join unnest(metadata) as m where m.code >= 400";
    expect(await ask(b.url, sql)).toEqual([{ n: 1 }]);
    // B read the model just now: it trusts it for the next half second
    expect((await postLogs(a.url, "cloudflare.logs.prod", json([coded("c2", "oops")]))).status).toBe(200);
    const res = await fetch(
      `${b.url}/api/endpoints/query/logs.all?project=multi&sql=${encodeURIComponent(sql)}`,
      { headers: { "X-API-KEY": QUERY_TOKEN } },
    );
    const body = (await res.json()) as any;
    expect(res.status, JSON.stringify(body)).toBe(200);
  });
});
