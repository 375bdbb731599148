import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

/**
 * ClickHouse's TTL (DESIGN.md §10) must expire the events core's retention removes, whatever the
 * engine's time zone. It was a Date, which ClickHouse compares with its own local today: on an
 * engine east of UTC (chDB follows the process's TZ; a server its `timezone`), the events of the
 * oldest day kept went at the next merge up to 14 hours before the day left the retention — in
 * Pacific/Kiritimati from 10:00 UTC on, every day.
 *
 * The engine runs in a child process with TZ 14 hours east of UTC (chDB takes its zone once, at
 * start) and says when its TTL expires an event: the instant of the TTL expression as a DateTime,
 * which is how the engine reads a Date TTL (the day's local midnight).
 */
/** this package's sources, and its folder (node resolves tsx from there up) */
const SRC = fileURLToPath(new URL("../src", import.meta.url));
const PACKAGE = fileURLToPath(new URL("..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "qes-ch-ttl-tz-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `{zone, instants}`: the engine's zone and, per [timestamp, days], the unix second its TTL expires it */
async function ttlInstants(cases: [string, number][]): Promise<{ zone: string; instants: number[] }> {
  const src = (file: string) => JSON.stringify(join(SRC, file));
  const script = `
    const { openChdbEngine } = await import(${src("clickhouse-connection.ts")});
    const { ttlSql } = await import(${src("clickhouse-storage.ts")});
    const engine = await openChdbEngine(${JSON.stringify(join(dir, "qes.chdb"))}, "qes");
    const one = async (query) =>
      (await engine.owner.use(async (c) => (await c.query({ query, format: "TabSeparatedRaw" })).text())).trim();
    const instants = [];
    for (const [timestamp, days] of ${JSON.stringify(cases)}) {
      const ttl = ttlSql({ database: "qes" }, "t", days).replace(/^.* MODIFY TTL /s, "");
      instants.push(Number(await one(
        "SELECT toUnixTimestamp(toDateTime(" + ttl + ")) FROM (SELECT toDateTime64('" + timestamp + "', 6, 'UTC') AS timestamp)",
      )));
    }
    process.stdout.write(JSON.stringify({ zone: await one("SELECT timezone()"), instants }));
    await engine.close();
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: PACKAGE,
    env: { ...process.env, TZ: "Etc/GMT-14" },
  });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => {
    out += c;
  });
  child.stderr.setEncoding("utf8").on("data", (c: string) => {
    err += c;
  });
  const code = await new Promise<number | null>((r) => child.on("exit", r));
  if (code !== 0) throw new Error(`the engine's child exited ${code}: ${err}`);
  return JSON.parse(out) as { zone: string; instants: number[] };
}

const second = (iso: string) => Date.parse(iso) / 1000;

describe("ClickHouse's retention TTL on an engine east of UTC", () => {
  it("expires an event when its UTC day leaves the retention, as core's cutoff does", async () => {
    const { zone, instants } = await ttlInstants([
      // kept today and the day after (1 day): gone when the UTC day two days later begins
      ["2025-01-13 23:59:59", 1],
      ["2025-01-13 00:00:00", 30],
      // before 1970: as of 1970-01-01, long past
      ["1960-06-01 00:00:00", 7],
      // past the engine's last day: on that day (never, in practice), not wrapped into the past
      ["2150-01-01 00:00:00", 7],
    ]);
    expect(zone).toBe("Etc/GMT-14");
    expect(instants).toEqual([
      second("2025-01-15T00:00:00Z"),
      second("2025-02-13T00:00:00Z"),
      second("1970-01-09T00:00:00Z"),
      second("2106-02-06T00:00:00Z"),
    ]);
  }, 120_000);
});
