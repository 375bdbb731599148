import { type Backend, type LogEvent, nowMicros, type OutputColumn, type RetentionPolicy } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postLogs } from "../../../test/http/support/ingest.ts";
import { serversOnOneStore } from "../../../test/http/support/ingest-workers.ts";
import { type ClickhouseEngine, openChdbEngine } from "../src/clickhouse-connection.ts";
import { addIdProjectionSql } from "../src/clickhouse-storage.ts";
import { storedIdsSql } from "../src/clickhouse-stored-ids.ts";
import { CLICKHOUSE_QUERY_SETTINGS } from "../src/clickhouse-types.ts";
import { createClickhouseBackend } from "../src/index.ts";
import { chdbTestPath, handQuery, uniqueDatabase } from "./helpers.ts";

/**
 * Probes of the id projection (`qes_by_id`): widenings, start-up migration, retention, consumer
 * SQL on id and hostile ids, each checking that ingest, load and queries store and return what
 * they did without it.
 */

const DAY = 86_400_000_000n;

function events(
  ids: readonly string[],
  body: Record<string, unknown> = {},
  timestamp = nowMicros(),
): LogEvent[] {
  return ids.map((id) => ({ id, timestamp, body: { event_message: `m ${id}`, ...body } }));
}

const range = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

let engine: ClickhouseEngine;
const database = uniqueDatabase("qes_pp");

beforeAll(async () => {
  engine = await openChdbEngine(chdbTestPath(), database);
});
afterAll(async () => {
  await engine.close();
});

async function text(query: string, params: Record<string, unknown> = {}): Promise<string> {
  return engine.owner.use(async (c) =>
    (await c.query({ query, query_params: params, format: "TabSeparatedRaw" })).text(),
  );
}

async function command(query: string): Promise<void> {
  await engine.owner.use((c) => c.command({ query }));
}

async function open(db: string, retention?: RetentionPolicy): Promise<Backend> {
  const backend = createClickhouseBackend(
    retention === undefined
      ? { path: chdbTestPath(), database: db }
      : { path: chdbTestPath(), database: db, retention },
  );
  await backend.init();
  return backend;
}

async function tableOf(backend: Backend, source: string): Promise<string> {
  return (await backend.schema()).sources[source]!.table;
}

async function hasProjection(db: string, table: string): Promise<boolean> {
  return /PROJECTION qes_by_id/.test(await text(`SHOW CREATE TABLE ${db}.${table}`));
}

/** Waits until no mutation of `table` is pending (MATERIALIZE PROJECTION runs in the background). */
async function mutationsDone(db: string, table: string): Promise<void> {
  for (;;) {
    const pending = await text(
      "SELECT count() FROM system.mutations WHERE database = {db:String} AND table = {t:String} AND NOT is_done",
      { db, t: table },
    );
    if (pending.trim() === "0") return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A store of the version before the projection: its sources' tables lose it. */
async function asBeforeProjection(db: string, tables: readonly string[]): Promise<void> {
  for (const t of tables) await command(`ALTER TABLE ${db}.${t} DROP PROJECTION IF EXISTS qes_by_id`);
  for (const t of tables) expect(await hasProjection(db, t)).toBe(false);
}

/** every stored row's id, sorted, and how many rows there are */
async function storedRows(db: string, table: string): Promise<{ ids: string[]; rows: number }> {
  const out = await text(
    `SELECT id FROM ${db}.${table} ORDER BY id SETTINGS optimize_use_projections = 0, output_format_tsv_crlf_end_of_line = 0`,
  );
  const ids = out === "" ? [] : out.replace(/\n$/, "").split("\n");
  return { ids, rows: ids.length };
}

describe("a source made before the projection, whose table name holds qes_by_id", () => {
  it("gets the projection at start-up, and ingest into it keeps working", async () => {
    const db = uniqueDatabase("qes_pp_name");
    const source = "app.qes-by-id";
    const first = await open(db);
    await first.ingest([{ source, events: events(range("a", 5)) }]);
    const table = await tableOf(first, source);
    expect(table).toBe("src_app_qes_by_id");
    await first.close();
    await asBeforeProjection(db, [table]);

    const second = await open(db);
    try {
      expect(await hasProjection(db, table)).toBe(true);
      expect(await second.ingest([{ source, events: events([...range("a", 5), ...range("b", 3)]) }])).toEqual(
        [{ source, stored: 3, duplicates: 5 }],
      );
      expect((await storedRows(db, table)).rows).toBe(8);
    } finally {
      await second.close();
    }
  });

  it("the check of a cluster's table finds the projection by its declaration, not its name", () => {
    const layout = { database: "qes_by_id_store", cluster: "logs" };
    const before =
      "CREATE TABLE qes_by_id_store.src_qes_by_id_local (`id` String, `timestamp` DateTime64(6, 'UTC'), " +
      "INDEX qes_id id TYPE bloom_filter(0.01) GRANULARITY 1) " +
      "ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/qes_by_id_store/src_qes_by_id_local', '{replica}')";
    expect(addIdProjectionSql(layout, "src_qes_by_id", before)).toHaveLength(2);
    const after = before.replace(
      "GRANULARITY 1)",
      "GRANULARITY 1, PROJECTION qes_by_id (SELECT id ORDER BY id))",
    );
    expect(addIdProjectionSql(layout, "src_qes_by_id", after)).toEqual([]);
  });
});

/** Bodies whose fields widen the source every way core widens: each batch after the first changes it. */
const WIDENINGS: Record<string, unknown>[] = [
  { n: 1, rec: { a: 1, inner: { x: 1 } }, top: { k: "v" } },
  { n: 1.5, extra: "new column" },
  { n: "text", rec: { a: "s", inner: [{ x: 2 }] } },
  { rec: "a string now", top: [{ k: "w" }] },
  { n: { deep: true } },
];

async function widenAndRetry(backend: Backend, db: string, source: string, load: boolean): Promise<void> {
  const all: string[] = [];
  for (const [i, body] of WIDENINGS.entries()) {
    const ids = range(`w${i}`, 40);
    all.push(...ids);
    if (load) {
      const lines = events(ids, body).map((e) =>
        JSON.stringify({ id: e.id, timestamp: Number(e.timestamp), ...e.body }),
      );
      await backend.load(source, lines);
    } else {
      expect(await backend.ingest([{ source, events: events(ids, body) }])).toEqual([
        { source, stored: 40, duplicates: 0 },
      ]);
    }
    // a retry of the batch, and of every batch before it, stores nothing
    expect(await backend.ingest([{ source, events: events(all, body) }])).toEqual([
      { source, stored: 0, duplicates: all.length },
    ]);
  }
  const table = await tableOf(backend, source);
  expect(await hasProjection(db, table)).toBe(true);
  const stored = (await storedRows(db, table)).ids.filter((id) => id.startsWith("w"));
  expect(stored).toEqual([...all].sort());
}

describe("widenings of a source with the projection, then ingest and retries", () => {
  for (const load of [false, true]) {
    const how = load ? "load" : "ingest";
    it(`a new source (${how})`, async () => {
      const db = uniqueDatabase("qes_pp_wide");
      const backend = await open(db);
      try {
        await widenAndRetry(backend, db, "wide.logs", load);
      } finally {
        await backend.close();
      }
    });

    it(`a source migrated at start-up, widened while its mutation may still run (${how})`, async () => {
      const db = uniqueDatabase("qes_pp_wide_old");
      const source = "wide.logs";
      const first = await open(db);
      await first.ingest([{ source, events: events(range("old", 30), { n: 7, rec: { a: 1 } }) }]);
      const table = await tableOf(first, source);
      await first.close();
      await asBeforeProjection(db, [table]);
      // parts of several days, so the mutation has several parts to do
      for (let d = 1; d <= 5; d++)
        await command(
          `INSERT INTO ${db}.${table} (id, timestamp, event_message) SELECT concat('bulk-${d}-', toString(number)), now64(6) - toIntervalDay(${d}), 'bulk' FROM numbers(20000)`,
        );
      const backend = await open(db);
      try {
        await widenAndRetry(backend, db, source, load);
        expect(
          await backend.ingest([{ source, events: events(["old-3", "bulk-2-19999", "bulk-5-0"]) }]),
        ).toEqual([{ source, stored: 0, duplicates: 3 }]);
        await mutationsDone(db, table);
        const failed = await text(
          "SELECT count() FROM system.mutations WHERE database = {db:String} AND table = {t:String} AND latest_fail_reason != ''",
          { db, t: table },
        );
        expect(failed.trim()).toBe("0");
        expect((await storedRows(db, table)).rows).toBe(30 + 5 * 20000 + WIDENINGS.length * 40);
      } finally {
        await backend.close();
      }
    });
  }
});

describe("parts without the projection (added but not materialized: a crash between the two statements)", () => {
  it("the duplicate check finds ids in them, and a second start leaves them be", async () => {
    const db = uniqueDatabase("qes_pp_mixed");
    const source = "mixed.logs";
    const first = await open(db);
    await first.ingest([{ source, events: events(range("a", 50)) }]);
    const table = await tableOf(first, source);
    await first.close();
    await asBeforeProjection(db, [table]);
    await command(
      `INSERT INTO ${db}.${table} (id, timestamp, event_message) SELECT concat('bulk-', toString(number)), now64(6), 'bulk' FROM numbers(50000)`,
    );
    await command(`ALTER TABLE ${db}.${table} ADD PROJECTION qes_by_id (SELECT id ORDER BY id)`);
    const backend = await open(db);
    try {
      // ingest's check now reads the projection where a part has it, the column where not
      const ids = [...range("a", 50), "bulk-0", "bulk-49999", ...range("new", 10)];
      const sql = storedIdsSql(db, table);
      const withProjection = await text(`${sql} ORDER BY id`, { ids });
      const without = await text(`${sql} ORDER BY id SETTINGS optimize_use_projections = 0`, { ids });
      expect(withProjection).toBe(without);
      expect(withProjection.trim().split("\n")).toHaveLength(52);
      expect(await backend.ingest([{ source, events: events(ids) }])).toEqual([
        { source, stored: 10, duplicates: 52 },
      ]);
      expect((await storedRows(db, table)).rows).toBe(50 + 50000 + 10);
    } finally {
      await backend.close();
    }
  });
});

describe("retention of a source with the projection", () => {
  it("dropped days leave neither the table nor the duplicate check; a TTL merge does too; retention 0 removes the TTL", async () => {
    const db = uniqueDatabase("qes_pp_ret");
    const now = nowMicros();
    const policy: RetentionPolicy = { defaultDays: 0, perSource: { "ret.logs": 3, "ttl.logs": 2 } };
    const backend = await open(db, policy);
    try {
      for (const source of ["ret.logs", "ttl.logs", "keep.logs"]) {
        await backend.ingest([
          { source, events: events(range("old", 20), {}, now - 10n * DAY) },
          { source, events: events(range("new", 20), {}, now) },
        ]);
      }
      const ret = await tableOf(backend, "ret.logs");
      const ttl = await tableOf(backend, "ttl.logs");
      const keep = await tableOf(backend, "keep.logs");
      // the TTL of ttl.logs expires its old day when parts merge (whole parts: ttl_only_drop_parts)
      await command(`OPTIMIZE TABLE ${db}.${ttl} FINAL`);
      const reports = await backend.applyRetention(policy, now);
      expect(reports.find((r) => r.source === "ret.logs")).toMatchObject({ deletedEvents: 20 });
      for (const table of [ret, ttl]) {
        const ids = [...range("old", 20), ...range("new", 20)];
        const sql = storedIdsSql(db, table);
        const withProjection = await text(`${sql} ORDER BY id`, { ids });
        expect(withProjection).toBe(
          await text(`${sql} ORDER BY id SETTINGS optimize_use_projections = 0`, { ids }),
        );
        expect(withProjection.trim().split("\n")).toEqual([...range("new", 20)].sort());
      }
      // expired ids are gone from the check: sent again (today) they are stored again, once
      for (const source of ["ret.logs", "ttl.logs"])
        expect(
          await backend.ingest([{ source, events: events([...range("old", 20), ...range("new", 20)]) }]),
        ).toEqual([{ source, stored: 20, duplicates: 20 }]);
      expect((await storedRows(db, keep)).rows).toBe(40);

      // retention 0 for every source: the TTL goes, the projection stays and attaches still work
      const forever: RetentionPolicy = { defaultDays: 0, perSource: {} };
      await backend.applyRetention(forever, now);
      for (const table of [ret, ttl]) {
        const created = await text(`SHOW CREATE TABLE ${db}.${table}`);
        expect(created).not.toMatch(/\bTTL\b/);
        expect(created).toMatch(/PROJECTION qes_by_id/);
      }
      expect(await backend.ingest([{ source: "ret.logs", events: events(range("later", 5)) }])).toEqual([
        { source: "ret.logs", stored: 5, duplicates: 0 },
      ]);
    } finally {
      await backend.close();
    }
  });
});

/**
 * Consumer SQL on `id`, as the query user runs it (readonly), against the same SQL with the
 * projection off. The source holds raw duplicate rows too (inserted past ingest), so DISTINCT and
 * count() differ.
 */
describe("consumer SQL filtering, ordering and joining on id returns the rows it did without the projection", () => {
  const db = uniqueDatabase("qes_pp_sql");
  let backend: Backend;
  let table: string;
  beforeAll(async () => {
    backend = await open(db);
    await backend.ingest([
      { source: "sql.logs", events: events([...range("a", 300), "", "\0", "x'y", "50%_off", "\\N", "Ω"]) },
    ]);
    table = await tableOf(backend, "sql.logs");
    await command(
      `INSERT INTO ${db}.${table} (id, timestamp, event_message) SELECT toString(cityHash64(number)), now64(6) - toIntervalDay(number % 3), 'bulk' FROM numbers(120000)`,
    );
    await command(
      `INSERT INTO ${db}.${table} (id, timestamp, event_message) SELECT concat('a-', toString(number)), now64(6), 'dup' FROM numbers(10)`,
    );
  });
  afterAll(async () => {
    await backend.close();
  });

  const STRING = { kind: "scalar", type: "STRING" } as const;
  const INT64 = { kind: "scalar", type: "INT64" } as const;
  const id = { name: "id", type: STRING };
  const n = { name: "n", type: INT64 };
  /** name, SQL ({t}: the table), output columns, whether the projection serves it (EXPLAIN, engine defaults) */
  const cases: [string, string, OutputColumn[], boolean][] = [
    [
      "= one id",
      `SELECT id, event_message AS m FROM {t} WHERE id = 'a-7' ORDER BY m`,
      [id, { name: "m", type: STRING }],
      false,
    ],
    ["= on the projection's column only", `SELECT id FROM {t} WHERE id = 'a-7'`, [id], false],
    [
      "IN",
      `SELECT id FROM {t} WHERE id IN ('a-1', 'a-2', 'nope', '', '\\0', 'x''y') ORDER BY id`,
      [id],
      true,
    ],
    [
      "IN of thousands (as ingest's check)",
      `SELECT id FROM {t} WHERE id IN (SELECT concat('a-', toString(number)) FROM numbers(5000)) ORDER BY id`,
      [id],
      true,
    ],
    ["LIKE a prefix", `SELECT id FROM {t} WHERE id LIKE 'a-1%' ORDER BY id`, [id], true],
    ["LIKE with wildcards in the id", `SELECT id FROM {t} WHERE id LIKE '50\\%\\_%' ORDER BY id`, [id], true],
    ["ORDER BY id LIMIT", `SELECT id FROM {t} ORDER BY id LIMIT 7`, [id], true],
    ["ORDER BY id DESC LIMIT OFFSET", `SELECT id FROM {t} ORDER BY id DESC LIMIT 5 OFFSET 3`, [id], true],
    ["range", `SELECT count() AS n FROM {t} WHERE id >= 'a-' AND id < 'a-2'`, [n], false],
    ["count DISTINCT", `SELECT count(DISTINCT id) AS n FROM {t}`, [n], false],
    ["count of an id with duplicates", `SELECT count() AS n FROM {t} WHERE id = 'a-3'`, [n], false],
    [
      "GROUP BY id HAVING",
      `SELECT id, count() AS n FROM {t} GROUP BY id HAVING n > 1 ORDER BY id`,
      [id, n],
      false,
    ],
    [
      "self join on id",
      `SELECT a.id AS id, count() AS n FROM {t} AS a INNER JOIN (SELECT id FROM {t} WHERE id LIKE 'a-2%') AS b ON a.id = b.id GROUP BY a.id ORDER BY a.id`,
      [id, n],
      false,
    ],
    [
      "IN a subquery",
      `SELECT count() AS n FROM {t} WHERE id IN (SELECT id FROM {t} WHERE id LIKE 'a-29%')`,
      [n],
      false,
    ],
    [
      "empty and NUL ids",
      `SELECT hex(id) AS h FROM {t} WHERE id IN ('', char(0)) ORDER BY h`,
      [{ name: "h", type: STRING }],
      false,
    ],
  ];
  const settings = Object.entries(CLICKHOUSE_QUERY_SETTINGS)
    .map(([k, v]) => `${k} = ${v}`)
    .join(", ");
  for (const [name, template, columns, usesProjection] of cases) {
    it(name, async () => {
      const sql = template.replaceAll("{t}", `${db}.${table}`);
      const got = await backend.execute(handQuery(sql, columns), [], { maxRows: 100_000, timeoutMs: 30_000 });
      const off = await text(`${sql} SETTINGS ${settings}, optimize_use_projections = 0`);
      const expected = off === "" ? [] : off.replace(/\n$/, "").split("\n");
      expect(got.rows.map((r) => columns.map((c) => String(r[c.name])).join("\t"))).toEqual(expected);
      expect(expected.length).toBeGreaterThan(0);
      // the query user's settings keep the projection out (aggregate_functions_null_for_empty);
      // with the engine's defaults it serves some, and they too return what they did without it
      const plain = await text(sql);
      expect(plain).toBe(await text(`${sql} SETTINGS optimize_use_projections = 0`));
      if (usesProjection) expect(await text(`EXPLAIN ${sql}`)).toMatch(/qes_by_id/);
    });
  }
});

describe("hostile ids", () => {
  it("are stored once, found again on retry, and read back as sent", async () => {
    const db = uniqueDatabase("qes_pp_hostile");
    const source = "hostile.logs";
    const ids = [
      "\0",
      "a\0b",
      "a\0",
      "'",
      "''); DROP TABLE x; --",
      "\\",
      "\\N",
      "\t\n\r",
      "🙂",
      "%",
      "_",
      " ",
      "x".repeat(100_000),
      `${"y".repeat(70_000)}\0`,
      "{ids:Array(String)}",
      '["a","b"]',
    ];
    const backend = await open(db);
    try {
      expect(await backend.ingest([{ source, events: events(ids) }])).toEqual([
        { source, stored: ids.length, duplicates: 0 },
      ]);
      // a retry, alone and within a call of fresh ids, across several batches
      expect(await backend.ingest([{ source, events: events(ids) }])).toEqual([
        { source, stored: 0, duplicates: ids.length },
      ]);
      expect(
        await backend.ingest([
          { source, events: events([...range("f", 3), ...ids.slice(0, 8)]) },
          { source, events: events([...ids.slice(8), ...range("f", 3)]) },
        ]),
      ).toEqual([
        { source, stored: 3, duplicates: 8 },
        { source, stored: 0, duplicates: ids.length - 8 + 3 },
      ]);
      const table = await tableOf(backend, source);
      const stored = await text(
        `SELECT hex(id) FROM ${db}.${table} ORDER BY id SETTINGS optimize_use_projections = 0`,
      );
      const hex = (s: string) => Buffer.from(s, "utf8").toString("hex").toUpperCase();
      expect(stored.trim().split("\n")).toEqual(
        [...ids, ...range("f", 3)].map(hex).sort((a, b) => {
          const x = Buffer.from(a, "hex");
          const y = Buffer.from(b, "hex");
          return Buffer.compare(x, y);
        }),
      );
    } finally {
      await backend.close();
    }
  });
});

describe("start-up migration", () => {
  it("a source whose table is missing, many sources, and two starts at once", async () => {
    const db = uniqueDatabase("qes_pp_start");
    const first = await open(db);
    const names = Array.from({ length: 30 }, (_, i) => `many.${i}`);
    await first.ingest(names.map((source) => ({ source, events: events(range(source, 3)) })));
    const schema = await first.schema();
    const tables = Object.values(schema.sources).map((s) => s.table);
    await first.close();
    await asBeforeProjection(db, tables);
    const missing = schema.sources["many.0"]!.table;
    await command(`DROP TABLE ${db}.${missing} SYNC`);

    const [a, b] = await Promise.all([open(db), open(db)]);
    try {
      for (const t of tables) if (t !== missing) expect(await hasProjection(db, t)).toBe(true);
      // every migrated source takes new events and refuses retried ones
      const results = await a.ingest(
        names.slice(1).map((source) => ({ source, events: events([...range(source, 3), `${source}-new`]) })),
      );
      expect(results).toEqual(names.slice(1).map((source) => ({ source, stored: 1, duplicates: 3 })));
      expect(
        await b.ingest([{ source: "many.7", events: events([...range("many.7", 3), "many.7-new"]) }]),
      ).toEqual([{ source: "many.7", stored: 0, duplicates: 4 }]);
    } finally {
      await a.close();
      await b.close();
    }
    // a start while nothing is left to do adds no mutation
    const count = () => text("SELECT count() FROM system.mutations WHERE database = {db:String}", { db });
    const before = await count();
    const again = await open(db);
    await again.close();
    expect(await count()).toBe(before);
  });
});

/**
 * POST /api/logs on ClickHouse, two servers on one database (one encoding rows on its ingest
 * worker, one parsing on its main thread): bodies posted twice at once to the first, then
 * retried on each.
 */
describe("POST /api/logs retried across two servers on one ClickHouse database", () => {
  const db = uniqueDatabase("qes_pp_http");
  const { backends, servers } = serversOnOneStore(() => open(db));

  it("hostile ids, repeated within a body and across bodies, widening bodies: each stored once", async () => {
    const source = "probe.http";
    const odd = [
      "lone\\ud800",
      "lone\\udc00x",
      "\\u0000nul",
      "pair\\ud83d\\ude00",
      'quote\\"',
      "back\\\\slash",
      "tab\\t",
      "50%_",
      "{ids:Array(String)}",
    ];
    const body = (round: number) =>
      `[${[...odd, ...odd, `r${round}`]
        .map(
          (id, i) =>
            `{"id":"${id}","timestamp":"2025-01-14T10:00:00Z","event_message":"m","f${round % 3}":${round % 2 ? `"s${i}"` : i}}`,
        )
        .join(",")}]`;
    for (let round = 0; round < 6; round++) {
      // twice at once on one server (its writes are serialised), taking turns by round, so each
      // round's new rows and widening come right after the other server's (the source itself
      // made by the first); then retried on each
      const first = servers[round % 2]!;
      const posted = await Promise.all([1, 2].map(() => postLogs(first.url, source, body(round))));
      expect(posted.map((p) => p.status)).toEqual([200, 200]);
      for (const s of servers) expect((await postLogs(s.url, source, body(round))).status).toBe(200);
    }
    const table = await tableOf(backends[0]!, source);
    const [rows, distinct] = (
      await text(`SELECT count(), uniqExact(id) FROM ${db}.${table} SETTINGS optimize_use_projections = 0`)
    )
      .trim()
      .split("\t")
      .map(Number);
    expect(rows).toBe(odd.length + 6);
    expect(distinct).toBe(rows);
    expect(await hasProjection(db, table)).toBe(true);
  });
});
