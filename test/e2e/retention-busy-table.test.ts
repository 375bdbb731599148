import { createLogger } from "@qes/server";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RetentionRunner } from "../../packages/server/src/retention/retention-runner.ts";
import { postgresStore, type Store, TEST_POSTGRES_URL } from "../http/support/stores.ts";
import { runCli } from "./support/run-cli.ts";

/**
 * PostgreSQL retention drops an old day's partition only if it gets the source's table within a
 * second (a waiting DROP stalls every query of the source). A query or load holding the table
 * longer leaves the day to the next run, and `qes retention` said "0 events older than their
 * source's retention removed": a cron log could not tell a store with nothing old from one whose
 * old days a long dashboard query kept at every run.
 */
const SOURCE = "busy.src";
let store: Store;
let env: Record<string, string>;
beforeAll(async () => {
  store = await postgresStore({
    [SOURCE]: [
      JSON.stringify({ id: "old", timestamp: "2024-11-01T00:00:00Z" }),
      JSON.stringify({ id: "new", timestamp: "2025-01-15T10:00:00Z" }),
    ],
  });
  env = {
    QES_BACKEND: "postgres",
    QES_POSTGRES_URL: TEST_POSTGRES_URL,
    QES_POSTGRES_SCHEMA: store.schema!,
    QES_TEST_NOW: "2025-01-15T12:00:00Z",
    QES_RETENTION_DAYS: "30",
  };
});
afterAll(() => store?.dispose());

describe("qes retention on PostgreSQL while a query holds a source's table", () => {
  /** `work` while a long query's transaction holds the source's table (and every partition) */
  async function whileQueried<T>(work: () => Promise<T>): Promise<T> {
    const table = (await store.backend.schema()).sources[SOURCE]!.table;
    const reader = new pg.Client({ connectionString: TEST_POSTGRES_URL });
    await reader.connect();
    try {
      await reader.query("begin");
      await reader.query(`select count(*) from "${store.schema}"."${table}"`);
      return await work();
    } finally {
      await reader.query("rollback");
      await reader.end();
    }
  }

  it("the server's run logs a warning naming the source and the partitions it left", async () => {
    const lines: { level: number; msg: string; left?: unknown }[] = [];
    const runner = new RetentionRunner({
      backend: store.backend,
      policy: { defaultDays: 30, perSource: {} },
      clock: () => BigInt(Date.parse(env.QES_TEST_NOW!)) * 1000n,
      logger: createLogger({ destination: { write: (l: string) => void lines.push(JSON.parse(l)) } }),
    });
    try {
      await whileQueried(() => runner.run());
    } finally {
      await runner.close();
    }
    expect(lines.find((l) => l.msg === "retention run")).toMatchObject({
      level: 40,
      left: [{ source: SOURCE, partitions: 1 }],
    });
  });

  it("says which old partitions it left for the next run; the next run drops them", async () => {
    {
      const busy = await whileQueried(() => runCli(["retention"], { env }));
      expect(busy.code, busy.stderr).toBe(0);
      expect(busy.stdout).toMatch(
        /busy\.src\s+0 events removed; 1 daily partition\(s\) left: the table was busy/,
      );
      expect(busy.stdout).toContain("retention: 1 old daily partition(s) left for the next run");
    }
    const free = await runCli(["retention"], { env });
    expect(free.stdout).toMatch(/busy\.src\s+1 events removed \(1 daily partition\(s\) dropped\)\n/);
    expect(free.stdout).not.toContain("left");
  }, 60_000);
});
