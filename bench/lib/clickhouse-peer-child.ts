/**
 * The plain ClickHouse peer, in a process of its own: chDB binds one data directory per process,
 * and the benchmark's process has bound qes's store by the time the peer is needed. Started by
 * `openPlainClickhouse` (plain-peers.ts) with IPC; answers `{ id, sql, params }` messages with
 * `{ id, rows }` (JSONEachRow objects) or `{ id, error }`.
 *
 *   argv: <data directory> <events file>
 *
 * The data directory keeps both tables between runs while a marker file names the events file.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { openChdbEngine } from "../../packages/backend-clickhouse/src/clickhouse-connection.ts";
import { readLines } from "./data.ts";

const [dir, file] = process.argv.slice(2) as [string, string];
const tag = basename(file);
const marker = `${dir}.loaded`;
const reuse = existsSync(marker) && readFileSync(marker, "utf8") === tag;
if (!reuse) {
  rmSync(marker, { force: true });
  rmSync(dir, { recursive: true, force: true });
}
const engine = await openChdbEngine(dir, "plain");
const command = (query: string) => engine.owner.use((c) => c.command({ query }));

/**
 * What a ClickHouse user writes: the event's own fields, `metadata` as the JSON type. `edge` keeps
 * the file's order (no sorting key); `edge_by_key` is sorted by `(project, timestamp)`, the key a
 * ClickHouse user picks for "one project's newest rows", which holds each project in time order.
 */
const columns = `(id String, timestamp DateTime64(6, 'UTC'), event_message String,
  project Nullable(String), metadata JSON)`;

let loadSeconds: number | null = null;
if (!reuse) {
  const t = performance.now();
  await command(`CREATE TABLE edge ${columns} ENGINE = MergeTree ORDER BY tuple()`);
  let lines: string[] = [];
  const insert = async () => {
    await command(
      "INSERT INTO edge SETTINGS date_time_input_format = 'best_effort', input_format_skip_unknown_fields = 1 " +
        `FORMAT JSONEachRow\n${lines.join("\n")}`,
    );
    lines = [];
  };
  for await (const line of readLines(file)) {
    lines.push(line);
    if (lines.length >= 10_000) await insert();
  }
  if (lines.length > 0) await insert();
  await command("OPTIMIZE TABLE edge FINAL");
  loadSeconds = (performance.now() - t) / 1000;
  await command(
    `CREATE TABLE edge_by_key ${columns} ENGINE = MergeTree ORDER BY (project, timestamp) SETTINGS allow_nullable_key = 1`,
  );
  await command("INSERT INTO edge_by_key SELECT * FROM edge");
  await command("OPTIMIZE TABLE edge_by_key FINAL");
  writeFileSync(marker, tag);
}

process.on("message", async (m: { id: number; sql: string; params: Record<string, string> }) => {
  try {
    const rows = await engine.query.use(async (c) =>
      (await c.query({ query: m.sql, query_params: m.params, format: "JSONEachRow" })).json(),
    );
    process.send!({ id: m.id, rows });
  } catch (e) {
    process.send!({ id: m.id, error: String(e) });
  }
});
process.on("disconnect", () => {
  void engine.close().finally(() => process.exit(0));
});
process.send!({ ready: true, loadSeconds });
