import { compileEndpoint, type EndpointDefinition } from "@qes/core";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresBackend, type PostgresBackend } from "../src/index.ts";
import { freshBackend, handQuery, ownerQuery, scalar, TEST_POSTGRES_URL, tableOf } from "./helpers.ts";

const EDGE = "cloudflare.logs.prod";
const EVENTS = 40_000;
const PROJECTS = 40;

interface PlanNode {
  "Node Type": string;
  "Plan Rows"?: number;
  Strategy?: string;
  "Index Name"?: string;
  "Relation Name"?: string;
  "Scan Direction"?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/** Edge events over 40 projects and three days, in no particular order. */
function* edgeEvents(): Generator<string> {
  const start = Date.UTC(2025, 0, 13);
  for (let i = 0; i < EVENTS; i++) {
    const ms = start + ((i * 7919) % (3 * 86_400_000));
    yield JSON.stringify({
      id: `e${i}`,
      timestamp: new Date(ms).toISOString(),
      event_message: `GET | 200 | /rest/v1/t${i % 13}`,
      project: `project${i % PROJECTS}`,
      metadata: { request: { method: "GET", path: `/rest/v1/t${i % 13}` }, response: { status_code: 200 } },
    });
  }
}

describe("logs.all-shaped queries use the timestamp indexes of the daily partitions", () => {
  let backend: PostgresBackend;
  let dispose: () => Promise<void>;
  let table: string;
  let metadataColumn: string;

  beforeAll(async () => {
    ({ backend, dispose } = await freshBackend("idx"));
    await backend.load(EDGE, edgeEvents());
    table = await tableOf(backend, EDGE);
    metadataColumn = (await backend.schema()).sources[EDGE]!.fields.metadata!.column!;
  }, 120_000);
  afterAll(async () => {
    await dispose();
  });

  /** EXPLAIN with bound values, as the reader runs it: the extended protocol's unnamed statement. */
  async function plan(sql: string, values: (string | null)[]): Promise<PlanNode[]> {
    const client = new pg.Client({ connectionString: backend.config.queryUrl });
    await client.connect();
    try {
      const { rows } = await client.query(`explain (format json) ${sql}`, values);
      return nodes((rows[0]["QUERY PLAN"] as { Plan: PlanNode }[])[0]!.Plan);
    } finally {
      await client.end();
    }
  }

  it("newest 100 rows of one project after a start time: a backward index scan, no sort", async () => {
    const sql = `select id, "timestamp", event_message, ${metadataColumn} as metadata from ${table}
      where project = $1 and "timestamp" > $2::timestamptz order by "timestamp" desc limit 100`;
    const found = await plan(sql, ["project7", "2025-01-14 00:00:00+00"]);
    // daily partitions: an ordered Append of one backward index scan per day from the start day
    // on (the planner picks (project, timestamp) or (timestamp) + filter by the heap's order),
    // the days before the start pruned, no sort, no sequential scan
    const scans = found.filter((n) => n["Node Type"] === "Index Scan");
    expect(scans.map((n) => n["Relation Name"]).sort()).toEqual([
      "src_cloudflare_logs_prod__20250114",
      "src_cloudflare_logs_prod__20250115",
    ]);
    for (const scan of scans) {
      expect(scan["Index Name"]).toMatch(/timestamp_idx$/);
      expect(scan["Scan Direction"]).toBe("Backward");
    }
    expect(found.some((n) => n["Node Type"] === "Sort" || n["Node Type"] === "Seq Scan")).toBe(false);
  });

  it("logs.all's optional bounds (`$n is null or …`) keep the index", async () => {
    const sql = `select * from (select t."timestamp", t.id, t.event_message, t.${metadataColumn} as metadata from ${table} as t
      where t.project = $1
        and ($2::timestamptz is null or t."timestamp" > $2::timestamptz)
        and ($3::timestamptz is null or t."timestamp" <= $3::timestamptz)
      order by t."timestamp" desc) as edge_logs limit 100`;
    for (const bounds of [
      [null, null],
      ["2025-01-14 00:00:00+00", null],
      ["2025-01-14 00:00:00+00", "2025-01-15 00:00:00+00"],
    ]) {
      const found = await plan(sql, ["project7", ...bounds]);
      expect(found.find((n) => n["Node Type"] === "Index Scan")?.["Index Name"]).toMatch(/timestamp_idx$/);
      expect(found.some((n) => n["Node Type"] === "Sort")).toBe(false);
      expect(found.some((n) => n["Node Type"] === "Seq Scan")).toBe(false);
    }
  });

  it("returns the newest rows of that project", async () => {
    const result = await backend.execute(
      handQuery(
        `select id, "timestamp" from ${table} where project = $1 order by "timestamp" desc limit 100`,
        [scalar("id", "STRING"), scalar("timestamp", "TIMESTAMP")],
        [["project", "STRING"]],
      ),
      ["project7"],
      { maxRows: 100, timeoutMs: 5000 },
    );
    expect(result.rows).toHaveLength(100);
    const times = result.rows.map((r) => r.timestamp as number);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });
});

describe("grouping by a time bucket: the planner knows how few buckets there are", () => {
  let backend: PostgresBackend;
  let schema: string;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ backend, schema, dispose } = await freshBackend("bucket"));
    await backend.load(EDGE, edgeEvents());
  }, 120_000);
  afterAll(async () => {
    await dispose();
  });

  /** the dialect's own SQL for counts per bucket over the whole store, as a stored query compiles */
  async function bucketQuery(unit: "DAY" | "HOUR" | "MINUTE"): Promise<string> {
    const definition: EndpointDefinition = {
      id: "0b9d7f3e-5c2a-4e18-9a6b-2f4c8d1e7a35",
      name: "buckets",
      sql: `select timestamp_trunc(t.timestamp, ${unit}) as bucket, count(*) as n
        from \`${EDGE}\` as t group by bucket`,
      sqlFile: "<test>",
      maxRows: 100_000,
      cacheTtlSeconds: 0,
      sandboxable: false,
      redactPii: false,
      params: {},
      version: unit,
    };
    return compileEndpoint(definition, { schema: await backend.schema(), dialect: backend.dialect }).sql;
  }

  /** the topmost aggregate of the plan the reader gets */
  async function aggregate(sql: string): Promise<PlanNode> {
    const client = new pg.Client({ connectionString: backend.config.queryUrl });
    await client.connect();
    try {
      await client.query(`set search_path to "${schema}"`);
      const { rows } = await client.query(`explain (format json) ${sql}`);
      const found = nodes((rows[0]["QUERY PLAN"] as { Plan: PlanNode }[])[0]!.Plan);
      return found.find((n) => n["Node Type"] === "Aggregate")!;
    } finally {
      await client.end();
    }
  }

  // 40,000 events with distinct timestamps over 3 days: without statistics on the bucket
  // expression the planner takes each timestamp for a group (~40,000) and sorts every row to
  // group them; there are 3 days, 72 hours and 4,320 minutes
  it("estimates days, hours and minutes from statistics on the bucket expressions", async () => {
    const day = await aggregate(await bucketQuery("DAY"));
    expect(day["Plan Rows"]).toBeLessThanOrEqual(10);
    expect(day.Strategy).toBe("Hashed");
    expect((await aggregate(await bucketQuery("HOUR")))["Plan Rows"]).toBeLessThanOrEqual(200);
    expect((await aggregate(await bucketQuery("MINUTE")))["Plan Rows"]).toBeLessThan(10_000);
  });

  it("a store from before the statistics gets them, analyzed, at its next start-up", async () => {
    const table = (await backend.schema()).sources[EDGE]!.table;
    for (const unit of ["minute", "hour", "day"])
      await ownerQuery(`drop statistics if exists "${schema}"."${table}_${unit}_stat"`);
    // and statistics of the table as they were: stale for a bucket the planner cannot see
    expect((await aggregate(await bucketQuery("DAY")))["Plan Rows"]).toBeGreaterThan(1000);
    const restarted = createPostgresBackend({ url: TEST_POSTGRES_URL, schema, pool: 2 });
    await restarted.init();
    await restarted.close();
    const { rows } = await ownerQuery(
      "select count(*)::int as n from pg_statistic_ext where stxnamespace = $1::regnamespace and stxname like $2",
      [`"${schema}"`, `${table}_%_stat`],
    );
    expect(rows[0].n).toBe(3);
    expect((await aggregate(await bucketQuery("DAY")))["Plan Rows"]).toBeLessThanOrEqual(10);
  });
});
