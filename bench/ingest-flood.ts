/**
 * Server memory under a flood of large ingest bodies (issue 13: "no unbounded buffer; server
 * memory stays bounded: report RSS"): `clients` concurrent clients post JSON arrays of about
 * `mbPerBody` MB (gzipped with `gzip`) for `seconds`, each waiting `Retry-After` after a 429, while
 * the server's RSS is sampled every 100 ms. Bounded means the peak does not follow the number of
 * clients; every 429 must carry Retry-After. The same three bodies are resent, so most events are
 * duplicates after the first round: the measure is of the bodies read, parsed and queued.
 *
 *   node --import tsx bench/ingest-flood.ts <duckdb|postgres|clickhouse> <clients> <seconds> <mbPerBody> [gzip]
 */
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { startQes } from "../test/http/support/qes-process.ts";

const [backend = "duckdb", clientsText = "40", secondsText = "30", mbText = "8", gz = ""] =
  process.argv.slice(2);
const I = "flood-ingest-token-0123456789";
const dir = mkdtempSync(join(tmpdir(), `flood-${backend}-`));
mkdirSync(join(dir, "ep"));
const env: Record<string, string> = {
  QES_API_KEYS: "flood-query-token-0123456789",
  QES_INGEST_KEYS: I,
  QES_SEED: "false",
  QES_ENDPOINTS_DIR: join(dir, "ep"),
  ...(backend === "duckdb"
    ? { QES_BACKEND: "duckdb", QES_DUCKDB_PATH: join(dir, "q.duckdb") }
    : backend === "clickhouse"
      ? { QES_BACKEND: "clickhouse", QES_CLICKHOUSE_PATH: join(dir, "ch") }
      : {
          QES_BACKEND: "postgres",
          QES_POSTGRES_URL: "postgres://postgres@127.0.0.1:5432/test",
          QES_POSTGRES_SCHEMA: `flood_${process.pid}`,
        }),
};
const server = await startQes(env);
const rss = () => {
  const s = readFileSync(`/proc/${server.pid}/status`, "utf8");
  return {
    rss: Number(/VmRSS:\s+(\d+)/.exec(s)?.[1]) / 1024,
    hwm: Number(/VmHWM:\s+(\d+)/.exec(s)?.[1]) / 1024,
  };
};
const base = rss();
const mb = Number(mbText);
function body(c: number, r: number): Buffer {
  // ~mb MB of events of 1 KB
  const n = Math.floor((mb * 1024 * 1024) / 1100);
  const events = Array.from({ length: n }, (_, i) => ({
    id: `f-${c}-${r}-${i}`,
    timestamp: new Date().toISOString(),
    event_message: `flood ${c} ${r} ${i} ${"y".repeat(900)}`,
    metadata: { c, r, i },
  }));
  const t = Buffer.from(JSON.stringify(events));
  return gz ? gzipSync(t) : t;
}
const statuses = new Map<string, number>();
let noRetryAfter = 0;
let acceptedEvents = 0;
const end = Date.now() + Number(secondsText) * 1000;
let peak = base.rss;
const sampler = setInterval(() => {
  peak = Math.max(peak, rss().rss);
}, 100);
const pre = Array.from({ length: 3 }, (_, k) => body(999, k));
await Promise.all(
  Array.from({ length: Number(clientsText) }, async (_, c) => {
    for (let r = 0; Date.now() < end; r++) {
      const b = pre[(c + r) % pre.length]!; // same body, re-sent: also exercises dedupe
      try {
        const res = await fetch(`${server.url}/api/logs?source_name=flood.src`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-api-key": I,
            ...(gz ? { "content-encoding": "gzip" } : {}),
          },
          body: b,
        });
        const t = await res.text();
        const key = String(res.status);
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        if (res.status === 429 && !res.headers.get("retry-after")) noRetryAfter++;
        if (res.status === 200) acceptedEvents += JSON.parse(t).accepted;
        if (res.status === 429)
          await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get("retry-after") ?? 1)));
        else if (res.status !== 200) console.log(res.status, t.slice(0, 200));
      } catch (e) {
        statuses.set("error", (statuses.get("error") ?? 0) + 1);
        console.log("connection error:", String((e as { cause?: unknown }).cause ?? e));
      }
    }
  }),
);
clearInterval(sampler);
const after = rss();
console.log(
  JSON.stringify({
    backend,
    clients: Number(clientsText),
    mbPerBody: mb,
    gzip: !!gz,
    bodyBytes: pre[0]!.length,
    baseRssMB: Math.round(base.rss),
    peakRssSampledMB: Math.round(peak),
    hwmMB: Math.round(after.hwm),
    endRssMB: Math.round(after.rss),
    statuses: Object.fromEntries(statuses),
    noRetryAfter,
    acceptedEvents,
  }),
);
await server.stop("SIGTERM");
process.exit(0);
