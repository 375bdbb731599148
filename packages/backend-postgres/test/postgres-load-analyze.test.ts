import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresBackend } from "../src/index.ts";
import { createPrivateCluster, type PrivateCluster } from "./private-cluster.ts";

const EDGE = "cloudflare.logs.prod";

/** 2,000 edge events over two days from `from` (ms): enough for a load to analyze its table */
function* events(from = Date.UTC(2025, 0, 13), prefix = "e"): Generator<string> {
  for (let i = 0; i < 2000; i++) {
    yield JSON.stringify({
      id: `${prefix}${i}`,
      timestamp: new Date(from + i * 86_000).toISOString(),
      event_message: `GET /rest/v1/t${i % 13}`,
      project: `project${i % 7}`,
      metadata: { request: { method: "GET", path: `/rest/v1/t${i % 13}` }, response: { status_code: 200 } },
    });
  }
}

async function withClient<T>(url: string, f: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await f(client);
  } finally {
    await client.end();
  }
}

interface Loaded {
  table: string;
  /** the column of `metadata.request.path` */
  path: string;
}

/**
 * Loads the events into schema `qes` of the cluster and closes the backend: its connections
 * end, so the statistics collector has their counts of changes.
 */
async function load(cluster: PrivateCluster, lines: Iterable<string> = events()): Promise<Loaded> {
  const backend = createPostgresBackend({ url: cluster.url, schema: "qes", pool: 2 });
  try {
    await backend.init();
    await backend.load(EDGE, lines);
    const source = (await backend.schema()).sources[EDGE]!;
    return { table: source.table, path: source.fields.metadata!.fields!.request!.fields!.path!.column! };
  } finally {
    await backend.close();
  }
}

/** the columns with statistics over the whole table (the parent) */
async function parentColumns(cluster: PrivateCluster, table: string): Promise<string[]> {
  return withClient(cluster.url, async (c) => {
    const { rows } = await c.query<{ attname: string }>(
      "select attname from pg_stats where schemaname = 'qes' and tablename = $1 and inherited order by 1",
      [table],
    );
    return rows.map((r) => r.attname);
  });
}

/** the partitions of `table` holding statistics of `column` */
async function partitionsWithStatistics(
  cluster: PrivateCluster,
  table: string,
  column: string,
): Promise<string[]> {
  return withClient(cluster.url, async (c) => {
    const { rows } = await c.query<{ tablename: string }>(
      `select s.tablename from pg_stats s
        join pg_inherits i on i.inhrelid = format('%I.%I', s.schemaname, s.tablename)::regclass
       where s.schemaname = 'qes' and i.inhparent = format('qes.%I', $1::text)::regclass
         and s.attname = $2 and not s.inherited
       order by 1`,
      [table, column],
    );
    return rows.map((r) => r.tablename);
  });
}

async function partitionsOf(cluster: PrivateCluster, table: string): Promise<string[]> {
  return withClient(cluster.url, async (c) => {
    const { rows } = await c.query<{ name: string }>(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = format('qes.%I', $1::text)::regclass order by 1`,
      [table],
    );
    return rows.map((r) => r.name);
  });
}

/** a started backend over schema `qes` of the cluster, for `f` */
async function withBackend<T>(
  cluster: PrivateCluster,
  f: (backend: ReturnType<typeof createPostgresBackend>) => Promise<T>,
): Promise<T> {
  const backend = createPostgresBackend({ url: cluster.url, schema: "qes", pool: 2 });
  try {
    await backend.init();
    return await f(backend);
  } finally {
    await backend.close();
  }
}

function refresh(cluster: PrivateCluster) {
  return withBackend(cluster, (backend) => backend.refreshStatistics());
}

// autovacuum never analyzes a partitioned parent: what the parent has is the load's own ANALYZE
describe("what a load analyzes, and what analyzes the rest", () => {
  const clusters = new Map<string, PrivateCluster>();
  const cluster = (name: string) => clusters.get(name)!;
  beforeAll(async () => {
    const settings: Record<string, Record<string, string>> = {
      autovacuum: { autovacuum: "on" },
      // autovacuum's own pass is left far off, so that what analyzes the partitions here is qes's
      off: { autovacuum: "off" },
      untracked: { autovacuum: "off", track_counts: "off" },
    };
    await Promise.all(
      Object.entries(settings).map(async ([name, s]) => {
        const c = await createPrivateCluster(s);
        await c.start();
        clusters.set(name, c);
      }),
    );
  }, 90_000);
  afterAll(async () => {
    for (const c of clusters.values()) await c.destroy();
  });

  it("with autovacuum on: the load analyzes the four columns every source has; the statistics pass leaves the rest to autovacuum", async () => {
    const { table, path } = await load(cluster("autovacuum"));
    const columns = await parentColumns(cluster("autovacuum"), table);
    expect(columns).toEqual(["event_message", "id", "project", "timestamp"]);
    expect(columns).not.toContain(path);
    expect(await refresh(cluster("autovacuum"))).toEqual({ analyzed: [], skipped: "autovacuum" });
  }, 60_000);

  it("with autovacuum off: the load analyzes the four columns, and the statistics pass analyzes each changed partition whole, once", async () => {
    const c = cluster("off");
    const { table, path } = await load(c);
    expect(await parentColumns(c, table)).toEqual(["event_message", "id", "project", "timestamp"]);
    expect(await partitionsWithStatistics(c, table, path)).toEqual([]);
    const partitions = await partitionsOf(c, table);
    expect(partitions.length).toBeGreaterThanOrEqual(2);

    const first = await refresh(c);
    expect([...first.analyzed].sort()).toEqual(partitions);
    expect(await partitionsWithStatistics(c, table, path)).toEqual(partitions);
    // analyzed: their counts of changes start again, so the next pass has nothing to do
    expect(await refresh(c)).toEqual({ analyzed: [] });

    // a later load into one new day: only that day's partition is analyzed again
    await load(c, events(Date.UTC(2025, 0, 20), "later"));
    const after = await partitionsOf(c, table);
    const added = after.filter((p) => !partitions.includes(p));
    expect(added.length).toBeGreaterThanOrEqual(1);
    expect([...(await refresh(c)).analyzed].sort()).toEqual(added);
  }, 60_000);

  it("with autovacuum off: what ingest stores is analyzed too (ingest runs no ANALYZE of its own)", async () => {
    const c = cluster("off");
    const backend = createPostgresBackend({ url: c.url, schema: "qes", pool: 2 });
    let table: string;
    try {
      await backend.init();
      const events = Array.from({ length: 600 }, (_, i) => ({
        id: `ingested-${i}`,
        timestamp: BigInt(Date.UTC(2025, 1, 3, 10)) * 1000n + BigInt(i) * 1_000_000n,
        body: { event_message: `m${i}`, metadata: { level: i % 2 ? "info" : "error" } },
      }));
      await backend.ingest([{ source: "ingested.logs", events }]);
      table = (await backend.schema()).sources["ingested.logs"]!.table;
    } finally {
      await backend.close();
    }
    const partitions = await partitionsOf(c, table);
    expect(partitions).toHaveLength(1);
    expect((await refresh(c)).analyzed).toEqual(partitions);
    expect(await partitionsWithStatistics(c, table, "event_message")).toEqual(partitions);
  }, 60_000);

  it("skips a partition it cannot lock within a second, and analyzes it on a later pass", async () => {
    const c = cluster("off");
    const { table } = await load(c, events(Date.UTC(2025, 2, 1), "locked"));
    const fresh = await withClient(c.url, async (q) => {
      const { rows } = await q.query<{ name: string }>(
        `select relname as name from pg_stat_user_tables where schemaname = 'qes' and n_mod_since_analyze > 0
            and relid in (select inhrelid from pg_inherits where inhparent = format('qes.%I', $1::text)::regclass)
          order by 1`,
        [table],
      );
      return rows.map((r) => r.name);
    });
    expect(fresh.length).toBeGreaterThanOrEqual(2);
    const [held, ...rest] = fresh as [string, ...string[]];
    const holder = new pg.Client({ connectionString: c.url });
    await holder.connect();
    try {
      await withBackend(c, async (backend) => {
        await holder.query("begin");
        await holder.query(`lock table qes."${held}" in access exclusive mode`);
        const report = await backend.refreshStatistics();
        expect(report.analyzed).not.toContain(held);
        expect(report.analyzed).toEqual(expect.arrayContaining(rest));
        await holder.query("rollback");
      });
    } finally {
      await holder.end();
    }
    expect((await refresh(c)).analyzed).toEqual([held]);
  }, 60_000);

  it("does nothing while another instance holds the pass (advisory lock)", async () => {
    const c = cluster("off");
    await load(c, events(Date.UTC(2025, 3, 1), "other"));
    const other = new pg.Client({ connectionString: c.url });
    await other.connect();
    try {
      const key = await other.query<{ k: string }>(
        "select ('x' || substr(encode(sha256(convert_to('qes:statistics:qes', 'UTF8')), 'hex'), 1, 16))::bit(64)::bigint::text as k",
      );
      await other.query("select pg_advisory_lock($1::bigint)", [key.rows[0]!.k]);
      expect(await refresh(c)).toEqual({ analyzed: [] });
      await other.query("select pg_advisory_unlock($1::bigint)", [key.rows[0]!.k]);
    } finally {
      await other.end();
    }
    expect((await refresh(c)).analyzed.length).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it("where the server counts no changes (track_counts off), the load analyzes every column: nothing could follow it", async () => {
    const c = cluster("untracked");
    const { table, path } = await load(c);
    const columns = await parentColumns(c, table);
    expect(columns).toEqual(expect.arrayContaining(["event_message", "id", "project", "timestamp", path]));
    expect(columns.length).toBeGreaterThan(8);
    expect(await refresh(c)).toEqual({ analyzed: [], skipped: "untracked" });
  }, 60_000);
});
