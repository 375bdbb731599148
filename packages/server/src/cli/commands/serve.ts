import type { Backend } from "@qes/core";
import { ingestKey } from "../../auth/api-keys.ts";
import { type ResolvedKeys, resolveApiKeys } from "../../auth/configured-keys.ts";
import { exclusiveStoreOf, openBackend } from "../../backend/open-backend.ts";
import { type Clock, requestClock } from "../../clock.ts";
import { loadConfig } from "../../config.ts";
import {
  localIngestFile,
  newLocalIngestToken,
  removeLocalIngestFile,
  writeLocalIngestFile,
} from "../../ingest/local-ingest-file.ts";
import { generateEvents, type SeedSource } from "../../seed/generate-events.ts";
import { seedOfClock, seedStore } from "../../seed/seed-store.ts";
import { storeIsEmpty } from "../../seed/store-is-empty.ts";
import { type RunningService, startService } from "../../service.ts";
import { count, seconds } from "../terminal.ts";
import { curlLines } from "./banner.ts";
import { DEFAULT_SEED_DAYS, DEFAULT_SEED_EVENTS } from "./seed.ts";

const DEMO_EVERY_MS = 3000;
/** events added per demo tick and source */
const DEMO_BATCH: Partial<Record<SeedSource, number>> = {
  "cloudflare.logs.prod": 24,
  "postgres.logs": 3,
  "gotrue.logs.prod": 3,
  "deno-relay-logs": 2,
  "realtime.logs.prod": 2,
  "storage.logs.prod.2": 2,
};

/**
 * `qes serve [--demo]`: opens the store (seeding it when empty and QES_SEED=auto), serves HTTP on
 * PORT, prints URL, token and curl lines, and stops cleanly on SIGINT/SIGTERM.
 */
export async function serveCommand(opts: { demo: boolean }): Promise<number> {
  const config = loadConfig();
  const keys = await resolveApiKeys(config.apiKeys);
  const clock = requestClock(config.testNowMicros);
  const backend = await openBackend(config);
  let service: RunningService | undefined;
  let demo: { stop(): Promise<void> } | undefined;
  // an embedded store (DuckDB, chDB) has one writer, this process: `qes load` finds it through
  // this file and sends its events to the ingest API with a token made for this run, and `qes
  // retention` asks it for a run with the same token (ingest/local-ingest-file.ts)
  const store = exclusiveStoreOf(config);
  const local =
    store === undefined ? undefined : { file: localIngestFile(store), token: newLocalIngestToken() };
  try {
    if (config.seed === "auto" && (await storeIsEmpty(backend))) await seedSample(backend, clock);
    service = await startService({
      config,
      backend,
      keys: keys.keys,
      ...(local ? { ingestKeys: [ingestKey(local.token)], retentionToken: local.token } : {}),
    });
    if (local)
      await writeLocalIngestFile(local.file, { url: service.url, token: local.token, pid: process.pid });
    if (opts.demo) demo = startDemo(backend, clock, service);
  } catch (e) {
    await service?.close();
    await backend.close();
    throw e;
  }
  printBanner(service, keys, opts.demo);
  const running = service;
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        process.stderr.write(`${signal} again: exiting now\n`);
        process.exit(130);
      }
      stopping = true;
      process.stderr.write(`${signal}: finishing requests in flight and closing the store…\n`);
      // the demo's batch in flight finishes before the store closes
      (demo ? demo.stop() : Promise.resolve())
        .then(() => (local ? removeLocalIngestFile(local.file, local.token) : undefined))
        .then(() => running.close())
        .then(() => backend.close())
        .then(resolve, (e) => {
          process.stderr.write(`error while stopping: ${String(e)}\n`);
          resolve();
        });
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  return 0;
}

async function seedSample(backend: Backend, clock: Clock): Promise<void> {
  process.stdout.write(`The store is empty: seeding ${count(DEFAULT_SEED_EVENTS)} sample events…\n`);
  const started = performance.now();
  await seedStore(backend, {
    events: DEFAULT_SEED_EVENTS,
    spread: { days: DEFAULT_SEED_DAYS },
    seed: 1,
    nowMicros: clock(),
  });
  process.stdout.write(
    `Seeded in ${seconds((performance.now() - started) / 1000)} s (QES_SEED=false turns this off).\n`,
  );
}

/** keeps adding fresh events so minutely charts and a log tail stay alive; `stop` waits for a batch */
function startDemo(backend: Backend, clock: Clock, service: RunningService): { stop(): Promise<void> } {
  let tick = 0;
  let busy: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (busy) return;
    tick++;
    const now = clock();
    busy = (async () => {
      for (const [source, n] of Object.entries(DEMO_BATCH) as [SeedSource, number][]) {
        // seeded by the clock, not by the tick alone: a restarted server's first ticks made the ids
        // of the last run's, and a load stores an id once
        const lines = generateEvents(source, n, seedOfClock(now) ^ tick, now, {
          spread: { lastSeconds: DEMO_EVERY_MS / 1000 },
        });
        await backend.load(source, lines, { nowMicros: now });
      }
    })()
      .catch((e) => service.logger.error({ err: e }, "demo events could not be added"))
      .finally(() => {
        busy = undefined;
      });
  }, DEMO_EVERY_MS);
  return {
    stop: async () => {
      clearInterval(timer);
      await busy;
    },
  };
}

function printBanner(service: RunningService, keys: ResolvedKeys, demo: boolean): void {
  const out: string[] = ["", `qes is listening on ${service.url}`];
  let token = "$QES_TOKEN";
  if (keys.generated) {
    token = keys.generated.token;
    out.push(
      `API token: ${token}`,
      `  (${keys.generated.created ? "generated now and saved" : "read from"} ${keys.generated.file}; set QES_API_KEYS to choose your own)`,
    );
  } else {
    out.push("API tokens: from QES_API_KEYS (put one in $QES_TOKEN for the lines below)");
  }
  if (demo) out.push(`Demo mode: fresh events every ${DEMO_EVERY_MS / 1000} s.`);
  out.push("", "Endpoints (call them by name or by id):");
  for (const def of service.registry.list()) out.push(`  ${def.name.padEnd(20)} ${def.id}`);
  out.push("", "Try:", ...curlLines(service.url, token, service.registry).map((l) => `  ${l}`), "");
  // the token goes to the terminal only, never through the logger
  process.stdout.write(`${out.join("\n")}\n`);
}
