import { type LogEvent, type LogSchema, nowMicros } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSql } from "../../../test/support/run-sql.ts";
import { type ClickhouseEngine, openChdbEngine } from "../src/clickhouse-connection.ts";
import { createSourceSql, dropSourceSql, OLD_PARTITION_KEY } from "../src/clickhouse-storage.ts";
import { createClickhouseBackend } from "../src/index.ts";
import { chdbTestPath, uniqueDatabase } from "./helpers.ts";

/**
 * Daily partitions outside ClickHouse's Date (1970-01-01…2149-06-06): a source's table is
 * partitioned by `toDate32(timestamp)`, so partition pruning keeps events of 1960 and 2150;
 * tables made before it (`toDate`) still take ingest and loads, retention and statistics.
 */
const DAY = 86_400_000_000n;
// the real clock: the TTL that retention sets expires parts by it in the background
const NOW = nowMicros();
const TODAY = NOW - (NOW % DAY);
const micros = (iso: string) => BigInt(Date.parse(iso)) * 1000n;
const at = (id: string, timestamp: bigint): LogEvent => ({ id, timestamp, body: { event_message: id } });

const FIVE: [string, string][] = [
  ["e1960", "1960-05-01T00:00:00Z"],
  ["e2020", "2020-07-27T00:00:00Z"],
  ["e2024", "2024-06-01T00:00:00Z"],
  ["e2025", "2025-01-01T00:00:00Z"],
  ["e2150", "2150-01-01T00:00:00Z"],
];

const database = uniqueDatabase("qes_d32");
let engine: ClickhouseEngine;
const backend = createClickhouseBackend({
  path: chdbTestPath(),
  database,
  retention: { defaultDays: 0, perSource: {} },
});
beforeAll(async () => {
  await backend.init();
  engine = await openChdbEngine(chdbTestPath(), database);
});
afterAll(async () => {
  await backend.close();
  await engine.close();
});

async function text(query: string): Promise<string> {
  return engine.owner.use(async (c) => (await c.query({ query, format: "TabSeparatedRaw" })).text());
}

async function partitionKey(source: string): Promise<string> {
  const table = (await backend.schema({ fresh: true })).sources[source]!.table;
  return (
    await text(`SELECT partition_key FROM system.tables WHERE database = '${database}' AND name = '${table}'`)
  ).trim();
}

async function ids(source: string, where = "true"): Promise<string[]> {
  const rows = await runSql(backend, `select id from \`${source}\` where ${where} order by id`);
  return rows.map((r) => r.id as string);
}

/** Makes `source`'s table again with the key a previous version gave it, empty. */
async function recreateWithOldKey(source: string): Promise<void> {
  const schema: LogSchema = await backend.schema({ fresh: true });
  const s = schema.sources[source]!;
  await engine.owner.use(async (c) => {
    for (const sql of dropSourceSql(backend.layout, s.table)) await c.command({ query: sql });
    for (const sql of createSourceSql(backend.layout, s, 0, true, OLD_PARTITION_KEY))
      await c.command({ query: sql });
  });
}

async function expectRightRows(source: string): Promise<void> {
  expect(await ids(source, "timestamp < timestamp '2025-01-01'")).toEqual(["e1960", "e2020", "e2024"]);
  expect(await ids(source, "timestamp < timestamp '1970-01-01'")).toEqual(["e1960"]);
  expect(await ids(source, "timestamp >= timestamp '2024-12-01'")).toEqual(["e2025", "e2150"]);
}

describe("ClickHouse daily partitions by toDate32", () => {
  it("a loaded source answers queries on times before 1970 and after 2149 right", async () => {
    await backend.load(
      "d32.load",
      FIVE.map(([id, iso]) => JSON.stringify({ id, timestamp: iso, event_message: id })),
    );
    expect(await partitionKey("d32.load")).toBe("toDate32(timestamp)");
    await expectRightRows("d32.load");
  });

  it("an ingested source answers them right too", async () => {
    await backend.ingest([{ source: "d32.ingest", events: FIVE.map(([id, iso]) => at(id, micros(iso))) }]);
    expect(await partitionKey("d32.ingest")).toBe("toDate32(timestamp)");
    await expectRightRows("d32.ingest");
  });

  it("retention drops the days before the cutoff, 1960 among them, and keeps 2150; stats read the oldest day", async () => {
    await backend.ingest([
      {
        source: "d32.retention",
        events: [
          at("a1960", micros("1960-05-01T12:00:00Z")),
          at("b-old", TODAY - 40n * DAY),
          at("c-yesterday", TODAY - DAY),
          at("d-now", NOW),
          at("e2150", micros("2150-01-01T00:00:00Z")),
        ],
      },
    ]);
    const stats = async () => (await backend.sourceStats()).find((s) => s.source === "d32.retention");
    expect((await stats())?.oldestMicros).toBe(micros("1960-05-01T12:00:00Z"));
    const reports = await backend.applyRetention({ defaultDays: 0, perSource: { "d32.retention": 30 } }, NOW);
    expect(reports.find((r) => r.source === "d32.retention")).toMatchObject({
      deletedEvents: 2,
      droppedPartitions: 2,
    });
    expect(await ids("d32.retention")).toEqual(["c-yesterday", "d-now", "e2150"]);
    expect((await stats())?.oldestMicros).toBe(TODAY - DAY);
    // the TTL (set by retention, `ttl_only_drop_parts`) keeps the 2150 event through a merge
    const table = (await backend.schema()).sources["d32.retention"]!.table;
    await engine.owner.use((c) => c.command({ query: `OPTIMIZE TABLE ${database}.${table} FINAL` }));
    expect(await ids("d32.retention")).toEqual(["c-yesterday", "d-now", "e2150"]);
  });

  it("a table made with the old toDate key still takes ingest and loads, retention and stats", async () => {
    await backend.ingest([{ source: "d32.old", events: [at("first", NOW - 1n)] }]);
    await recreateWithOldKey("d32.old");
    expect(await partitionKey("d32.old")).toBe("toDate(timestamp)");
    await backend.ingest([
      { source: "d32.old", events: [at("b-old", TODAY - 40n * DAY), at("c-yesterday", TODAY - DAY)] },
    ]);
    await backend.load("d32.old", [
      JSON.stringify({ id: "d-now", timestamp: Number(NOW), event_message: "x" }),
    ]);
    expect(await partitionKey("d32.old")).toBe("toDate(timestamp)");
    expect(await ids("d32.old")).toEqual(["b-old", "c-yesterday", "d-now"]);
    const stats = async () => (await backend.sourceStats()).find((s) => s.source === "d32.old");
    expect((await stats())?.oldestMicros).toBe(TODAY - 40n * DAY);
    const reports = await backend.applyRetention({ defaultDays: 0, perSource: { "d32.old": 30 } }, NOW);
    expect(reports.find((r) => r.source === "d32.old")).toMatchObject({
      deletedEvents: 1,
      droppedPartitions: 1,
    });
    expect(await ids("d32.old")).toEqual(["c-yesterday", "d-now"]);
    expect((await stats())?.oldestMicros).toBe(TODAY - DAY);
  });
});
