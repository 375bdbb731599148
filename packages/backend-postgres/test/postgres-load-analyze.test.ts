import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresBackend } from "../src/index.ts";
import { createPrivateCluster, type PrivateCluster } from "./private-cluster.ts";

const EDGE = "cloudflare.logs.prod";

/** 2,000 edge events over two days: enough for a load to analyze its table */
function* events(): Generator<string> {
  const start = Date.UTC(2025, 0, 13);
  for (let i = 0; i < 2000; i++) {
    yield JSON.stringify({
      id: `e${i}`,
      timestamp: new Date(start + i * 86_000).toISOString(),
      event_message: `GET /rest/v1/t${i % 13}`,
      project: `project${i % 7}`,
      metadata: { request: { method: "GET", path: `/rest/v1/t${i % 13}` }, response: { status_code: 200 } },
    });
  }
}

/** the columns of the source's parent with statistics over the whole table, after a load */
async function parentStatistics(cluster: PrivateCluster): Promise<{ columns: string[]; path: string }> {
  const backend = createPostgresBackend({ url: cluster.url, schema: "qes", pool: 2 });
  try {
    await backend.init();
    await backend.load(EDGE, events());
    const source = (await backend.schema()).sources[EDGE]!;
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ attname: string }>(
        "select attname from pg_stats where schemaname = 'qes' and tablename = $1 and inherited order by 1",
        [source.table],
      );
      return {
        columns: rows.map((r) => r.attname),
        path: source.fields.metadata!.fields!.request!.fields!.path!.column!,
      };
    } finally {
      await client.end();
    }
  } finally {
    await backend.close();
  }
}

// autovacuum never analyzes a partitioned parent: what the parent has is the load's own ANALYZE
describe("what a load analyzes", () => {
  const clusters: PrivateCluster[] = [];
  beforeAll(async () => {
    for (const autovacuum of ["on", "off"]) {
      const cluster = await createPrivateCluster({ autovacuum });
      await cluster.start();
      clusters.push(cluster);
    }
  }, 60_000);
  afterAll(async () => {
    for (const cluster of clusters) await cluster.destroy();
  });

  it("with autovacuum on, the four columns every source has: autovacuum analyzes the partitions whole", async () => {
    const { columns, path } = await parentStatistics(clusters[0]!);
    expect(columns).toEqual(["event_message", "id", "project", "timestamp"]);
    expect(columns).not.toContain(path);
  }, 60_000);

  it("with autovacuum off, every column: nothing else would ever analyze them", async () => {
    const { columns, path } = await parentStatistics(clusters[1]!);
    expect(columns).toEqual(expect.arrayContaining(["event_message", "id", "project", "timestamp", path]));
    expect(columns.length).toBeGreaterThan(8);
  }, 60_000);
});
