import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { dropPostgresStorage } from "@qes/backend-postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type QesProcess, startQes } from "../http/support/qes-process.ts";
import { TEST_POSTGRES_URL, unique } from "../http/support/stores.ts";

/**
 * Acknowledged means durable (DESIGN.md §10): a real `qes serve` is killed with SIGKILL while 20
 * clients ingest; after a restart on the same store, every event whose request got 200 is there
 * exactly once. Half the events carry an id, half do not (their id derives from their content);
 * every other request is gzipped, each client brings a field of its own (the source widens while
 * they ingest), and some requests are refused (400): none of their events is stored.
 */
const QUERY_TOKEN = "crash-query-token-0123456789";
const INGEST_TOKEN = "crash-ingest-token-0123456789";
const CLIENTS = 20;
const PER_REQUEST = 25;
/** acknowledged requests to wait for before the kill */
const ACKS_BEFORE_KILL = 60;
/**
 * Events of today: retention (QES_RETENTION_DAYS, default 30) runs at the restart and would
 * rightly remove events of a fixed past date before the count.
 */
const EVENT_TIME = new Date().toISOString();

/**
 * A database of its own: start-up creates the reader role under a per-database advisory lock that
 * every other test file's PostgreSQL backend takes too; in the whole suite the restart once waited
 * on it past its 90 s deadline. Here the restart queues behind nobody but the killed process.
 */
const crashDatabase = `qes_crash_${process.pid}`;
const crashUrl = TEST_POSTGRES_URL.replace(/\/[^/]*$/, `/${crashDatabase}`);

async function adminQuery(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: TEST_POSTGRES_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

const dirs: string[] = [];
const schemas: string[] = [];
beforeAll(async () => {
  await adminQuery(`drop database if exists "${crashDatabase}" with (force)`);
  await adminQuery(`create database "${crashDatabase}"`);
});
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const s of schemas) await dropPostgresStorage(crashUrl, s);
  await adminQuery(`drop database if exists "${crashDatabase}" with (force)`);
});

/** an endpoint listing every message of the crash source with how often it is stored */
function endpointsDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "qes-crash-endpoints-"));
  dirs.push(dir);
  writeFileSync(
    join(dir, "crash.counts.sql"),
    "select t.event_message, count(*) as n from `cloudflare.logs.prod` as t\n" +
      "where t.project = 'crash' group by t.event_message",
  );
  writeFileSync(
    join(dir, "crash.counts.json"),
    JSON.stringify({ id: "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f", maxRows: 1_000_000, params: {} }),
  );
  return dir;
}

const STORES: { name: string; env(): Record<string, string> }[] = [
  {
    name: "duckdb",
    env: () => {
      const dir = mkdtempSync(join(tmpdir(), "qes-crash-"));
      dirs.push(dir);
      return { QES_BACKEND: "duckdb", QES_DUCKDB_PATH: join(dir, "qes.duckdb"), QES_DUCKDB_THREADS: "1" };
    },
  },
  {
    name: "postgres",
    env: () => {
      const schema = unique("qes_crash");
      schemas.push(schema);
      return {
        QES_BACKEND: "postgres",
        QES_POSTGRES_URL: crashUrl,
        QES_POSTGRES_SCHEMA: schema,
        QES_POSTGRES_POOL: "4",
      };
    },
  },
  {
    name: "clickhouse",
    env: () => {
      const dir = mkdtempSync(join(tmpdir(), "qes-crash-"));
      dirs.push(dir);
      return { QES_BACKEND: "clickhouse", QES_CLICKHOUSE_PATH: join(dir, "qes.chdb") };
    },
  },
];

/** as Vector's http sink sends: a JSON array, gzipped every other request */
function post(url: string | undefined, body: string, gzip = false): Promise<Response> {
  return fetch(`${url}/api/logs?source_name=cloudflare.logs.prod`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "X-API-KEY": INGEST_TOKEN,
      ...(gzip ? { "Content-Encoding": "gzip" } : {}),
    },
    body: gzip ? gzipSync(body) : body,
  });
}

/**
 * every REFUSED_EVERY-th request of a client, from its second on, holds an event with no valid
 * time: 400, and none of its events may be stored
 */
const REFUSED_EVERY = 7;

describe.each(STORES)("SIGKILL during ingest on $name", (store) => {
  it("keeps every acknowledged event exactly once after a restart, and once again when every request is resent", async () => {
    const env = {
      ...store.env(),
      QES_API_KEYS: QUERY_TOKEN,
      QES_INGEST_KEYS: INGEST_TOKEN,
      QES_SEED: "false",
      QES_ENDPOINTS_DIR: endpointsDir(),
    };
    let server: QesProcess | undefined = await startQes(env);
    const acknowledged: string[] = [];
    let acks = 0;
    let killed = false;
    let sent = 0;
    /** every body sent, answered or not: a shipper resends those it got no answer to */
    const bodies: string[] = [];
    /** the events of requests refused with 400: none may be stored */
    const refusedMessages: string[] = [];
    const client = async (c: number) => {
      for (let r = 0; !killed; r++) {
        const messages = Array.from({ length: PER_REQUEST }, (_, i) => `crash c${c} r${r} e${i}`);
        const refused = r % REFUSED_EVERY === 1;
        const events = messages.map((m, i) => ({
          ...(i % 2 === 0 ? { id: `id-${m.replaceAll(" ", "-")}` } : {}),
          timestamp: refused && i === PER_REQUEST - 1 ? "not a time" : EVENT_TIME,
          project: "crash",
          event_message: m,
          metadata: { client: c, round: r },
          // a field of each client's own: the source widens while the clients ingest
          [`client_${c}`]: r,
        }));
        sent++;
        const body = JSON.stringify(events);
        if (!refused) bodies.push(body);
        try {
          const res = await post(server?.url, body, r % 2 === 1);
          if (refused) {
            if (res.status !== 400) throw new Error(`expected 400, got ${res.status}: ${await res.text()}`);
            refusedMessages.push(...messages);
            continue;
          }
          if (res.status === 200) {
            acknowledged.push(...messages);
            acks++;
          } else if (res.status !== 429) {
            throw new Error(`unexpected ${res.status}: ${await res.text()}`);
          }
        } catch (e) {
          if (!killed) throw e;
          return;
        }
      }
    };
    const running = Array.from({ length: CLIENTS }, (_, c) => client(c));
    const enoughAcks = (async () => {
      while (acks < ACKS_BEFORE_KILL) await new Promise((r) => setTimeout(r, 10));
    })();
    // a client failing (anything but 200 or 429 before the kill) fails the test instead of waiting
    await Promise.race([enoughAcks, Promise.all(running)]);
    killed = true;
    await server.stop("SIGKILL");
    await Promise.all(running);
    expect(sent).toBeGreaterThan(acks);

    server = await startQes(env);
    try {
      const res = await fetch(`${server.url}/api/endpoints/query/crash.counts`, {
        headers: { "X-API-KEY": QUERY_TOKEN },
      });
      expect(res.status).toBe(200);
      const rows = ((await res.json()) as { result: { event_message: string; n: number }[] }).result;
      const stored = new Map(rows.map((r) => [r.event_message, r.n]));
      const missing = acknowledged.filter((m) => !stored.has(m));
      const twice = rows.filter((r) => r.n !== 1);
      expect(missing).toEqual([]);
      expect(twice).toEqual([]);
      expect(refusedMessages.length).toBeGreaterThan(0);
      expect(refusedMessages.filter((m) => stored.has(m))).toEqual([]);
      expect(acknowledged.length).toBeGreaterThanOrEqual(ACKS_BEFORE_KILL * PER_REQUEST);

      // the shippers resend every request, those the kill cut short (committed or not) among them:
      // each event is then there once, whether the first try was committed or not
      for (let i = 0; i < bodies.length; i += CLIENTS) {
        const answers = await Promise.all(bodies.slice(i, i + CLIENTS).map((b) => post(server?.url, b)));
        expect(answers.map((a) => a.status).filter((s) => s !== 200)).toEqual([]);
      }
      const again = await fetch(`${server.url}/api/endpoints/query/crash.counts`, {
        headers: { "X-API-KEY": QUERY_TOKEN },
      });
      const after = ((await again.json()) as { result: { event_message: string; n: number }[] }).result;
      expect(after.filter((r) => r.n !== 1)).toEqual([]);
      expect(after.length).toBe(bodies.length * PER_REQUEST);
    } finally {
      await server.stop("SIGKILL");
    }
  }, 180_000);
});
