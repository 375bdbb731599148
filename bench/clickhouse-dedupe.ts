/**
 * ClickHouse ingest as a source grows (issue 13): every ingest commit asks which of its ids the
 * source stores already (`storedIdsSql`, clickhouse-stored-ids.ts). This benchmark fills one source
 * to each of `--stored` sizes (plain SQL inserts before the clock, over 90 days) in embedded chDB
 * and times, as medians of `--rounds`:
 *  - the duplicate check of `--batch` fresh ids as ingest runs it (through the id projection,
 *    clickhouse-storage.ts), and the same query with `optimize_use_projections = 0` (as before
 *    the projection: the bloom filter on `id` lets a batch's thousands of ids through everywhere);
 *  - a whole `Backend.ingest` commit of `--batch` fresh events.
 *
 *   node --import tsx bench/clickhouse-dedupe.ts [--stored 1000000,5000000,20000000] [--batch 5000] [--rounds 5]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createClickhouseBackend } from "@qes/backend-clickhouse";
import type { LogEvent } from "@qes/core";
import { openChdbEngine } from "../packages/backend-clickhouse/src/clickhouse-connection.ts";
import { storedIdsSql } from "../packages/backend-clickhouse/src/clickhouse-stored-ids.ts";

const args = parseArgs({
  options: {
    stored: { type: "string", default: "1000000,5000000,20000000" },
    batch: { type: "string", default: "5000" },
    rounds: { type: "string", default: "5" },
  },
}).values;
const BATCH = Number(args.batch);
const ROUNDS = Number(args.rounds);
const SOURCE = "dedupe.logs";
const DATABASE = "qes_dedupe";
const NOW = 1_736_942_400_000_000n;
const DAY = 86_400_000_000n;

const dir = mkdtempSync(join(tmpdir(), "qes-bench-ch-dedupe-"));
process.once("exit", () => rmSync(dir, { recursive: true, force: true }));

function events(tag: string): LogEvent[] {
  return Array.from({ length: BATCH }, (_, i) => ({
    id: `${tag}-${i}`,
    timestamp: NOW - BigInt(i % 3) * DAY,
    body: { event_message: `fresh ${i}` },
  }));
}

async function median(fn: (round: number) => Promise<unknown>): Promise<number> {
  const ms: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t = performance.now();
    await fn(r);
    ms.push(performance.now() - t);
  }
  return ms.sort((a, b) => a - b)[Math.floor(ms.length / 2)]!;
}

const backend = createClickhouseBackend({ path: dir, database: DATABASE });
await backend.init();
await backend.ingest([{ source: SOURCE, events: events("seed") }]);
const table = (await backend.schema()).sources[SOURCE]!.table;
const engine = await openChdbEngine(dir, DATABASE);
const check = (ids: string[], projections: boolean) =>
  engine.owner.use(async (c) =>
    (
      await c.query({
        query: storedIdsSql(DATABASE, table),
        query_params: { ids },
        format: "JSONEachRow",
        clickhouse_settings: { optimize_use_projections: projections ? 1 : 0 },
      })
    ).json(),
  );
console.log(
  `# bench/clickhouse-dedupe: checks of ${BATCH} fresh ids and ingest commits of ${BATCH} events, median of ${ROUNDS}`,
);
console.log(
  `load average at start: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
console.log(
  "| stored events | check, id projection ms | check, without ms | without ÷ with | ingest commit ms |",
);
console.log("|---|---|---|---|---|");
let stored = 0;
for (const target of String(args.stored).split(",").map(Number)) {
  await engine.owner.use((c) =>
    c.command({
      query: `INSERT INTO ${DATABASE}.${table} (id, timestamp, event_message)
        SELECT toString(generateUUIDv4()), now64(6) - toIntervalSecond(number % (90 * 86400)), 'old'
        FROM numbers(${target - stored})`,
    }),
  );
  stored = target;
  const ids = (r: number) => events(`c${stored}-${r}`).map((e) => e.id);
  const withMs = await median((r) => check(ids(r), true));
  const withoutMs = await median((r) => check(ids(r), false));
  const commitMs = await median((r) =>
    backend.ingest([{ source: SOURCE, events: events(`i${stored}-${r}`) }]),
  );
  console.log(
    `| ${stored} | ${withMs.toFixed(0)} | ${withoutMs.toFixed(0)} | ${(withoutMs / withMs).toFixed(2)} | ${commitMs.toFixed(0)} |`,
  );
}
console.log(
  `load average at end: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
await engine.close();
await backend.close();
