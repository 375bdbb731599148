import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postBounded } from "../../packages/server/src/cli/bounded-post.ts";
import { runCli } from "./support/run-cli.ts";
import { holdDuckdbStore } from "./support/store-holder.ts";
import { answerEndlessly, startStub, stopStub } from "./support/stub-server.ts";

/**
 * `qes retention` on a DuckDB file another process holds asks the server named in
 * `<database>.serve.json` for the run. That answer was read whole and waited for without end: a
 * server streaming an endless answer grew the command without limit, and one that never answered
 * held a cron line's command for ever.
 */
let dir: string;
let database: string;
let holder: ChildProcessWithoutNullStreams;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "qes-retention-bounds-"));
  database = join(dir, "qes.duckdb");
  // another process holds the store (DuckDB: one writer), as a qes serve does
  holder = await holdDuckdbStore(database);
}, 120_000);
afterAll(() => {
  holder?.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

describe("qes retention through the server holding the store", () => {
  it("stops reading an answer past 16 MiB and says so", async () => {
    let answer: { closedEarly(): boolean } | undefined;
    const { server, url } = await startStub("127.0.0.1", (_req, res) => {
      answer = answerEndlessly(res, {
        head: '{"sources":[',
        chunk: Buffer.from('{"source":"s","removed":0},'.repeat(2000)),
        tail: '{"source":"s","removed":0}]}',
      });
    });
    try {
      writeFileSync(
        `${database}.serve.json`,
        `${JSON.stringify({ url, token: "qes_local_bounds0123456789", pid: holder.pid })}\n`,
        { mode: 0o600 },
      );
      const res = await runCli(["retention"], { env: { QES_DUCKDB_PATH: database } });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`(pid ${holder.pid}) at ${url} answered with more than 16777216 bytes`);
      expect(answer?.closedEarly()).toBe(true);
    } finally {
      await stopStub(server);
    }
  }, 120_000);

  it("gives up on a server that never answers once its bound has passed (an hour for the command)", async () => {
    const { server, url } = await startStub("127.0.0.1", () => {
      // never answers
    });
    try {
      const asked = postBounded(`${url}/api/retention`, { headers: {} }, { withinMs: 500, maxBytes: 1024 });
      expect(await asked).toEqual({ kind: "no_answer" });
    } finally {
      await stopStub(server);
    }
  });
});
