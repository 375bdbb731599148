import type { BUILTIN_SOURCES } from "@qes/core";
import { eventTime, isoMicros, type TimeSpread } from "./event-time.ts";
import { hashString, Prng } from "./prng.ts";
import { PROJECT_WEIGHTS, SEED_PROJECTS } from "./projects.ts";
import { authLogEvent } from "./sources/auth-logs.ts";
import { edgeLogEvent } from "./sources/edge-logs.ts";
import type { EventBuilder } from "./sources/event-context.ts";
import { functionEdgeLogEvent, functionLogEvent } from "./sources/function-logs.ts";
import { postgresLogEvent } from "./sources/postgres-logs.ts";
import { realtimeLogEvent } from "./sources/realtime-logs.ts";
import { pgbouncerLogEvent, postgrestLogEvent } from "./sources/service-logs.ts";
import { storageLogEvent } from "./sources/storage-logs.ts";

export type SeedSource = (typeof BUILTIN_SOURCES)[number];

const BUILDERS: Record<SeedSource, EventBuilder> = {
  "cloudflare.logs.prod": edgeLogEvent,
  "postgres.logs": postgresLogEvent,
  "deno-relay-logs": functionEdgeLogEvent,
  "deno-subhosting-events": functionLogEvent,
  "gotrue.logs.prod": authLogEvent,
  "realtime.logs.prod": realtimeLogEvent,
  "storage.logs.prod.2": storageLogEvent,
  "postgREST.logs.prod": postgrestLogEvent,
  "pgbouncer.logs.prod": pgbouncerLogEvent,
};

/** share of all seeded events per source: the edge log dominates, as on a real platform */
export const SOURCE_SHARES: Record<SeedSource, number> = {
  "cloudflare.logs.prod": 0.55,
  "postgres.logs": 0.1,
  "gotrue.logs.prod": 0.08,
  "deno-relay-logs": 0.06,
  "deno-subhosting-events": 0.05,
  "realtime.logs.prod": 0.05,
  "storage.logs.prod.2": 0.05,
  "postgREST.logs.prod": 0.04,
  "pgbouncer.logs.prod": 0.02,
};

export interface GenerateOptions {
  /** default: 7 days, dense in the last hour */
  spread?: TimeSpread;
  /** default: SEED_PROJECTS with PROJECT_WEIGHTS */
  projects?: readonly string[];
}

export function isSeedSource(source: string): source is SeedSource {
  return Object.hasOwn(BUILDERS, source);
}

/**
 * Realistic events of one source as NDJSON lines (log-event-shapes.md). Deterministic: the same
 * source, count, seed and `now` give the same lines. Used by `qes seed`, `qes serve` and bench/.
 */
export function* generateEvents(
  source: SeedSource,
  count: number,
  seed: number,
  nowMicros: bigint,
  opts: GenerateOptions = {},
): Generator<string> {
  const build = BUILDERS[source];
  const rng = new Prng((seed ^ hashString(source)) >>> 0);
  const spread = opts.spread ?? { days: 7 };
  const projects = opts.projects ?? SEED_PROJECTS;
  const weighted = projects.map((p, i) => [p, opts.projects ? 1 : (PROJECT_WEIGHTS[i] ?? 0.05)] as const);
  for (let i = 0; i < count; i++) {
    const micros = eventTime(rng, nowMicros, spread);
    const iso = isoMicros(micros);
    const project = rng.weighted(weighted);
    const id = rng.uuid();
    const body = build({ rng, project, micros, iso });
    yield toNdjson({ id, timestamp: iso, ...body });
  }
}

/** JSON text of an event, with int64() values written as bare integers */
function toNdjson(event: Record<string, unknown>): string {
  const text = JSON.stringify(event);
  if (!text.includes("\\u0000int64:")) return text;
  return text.replace(/"\\u0000int64:(-?\d+)"/g, "$1");
}

/** splits `total` events over the nine sources by SOURCE_SHARES (every source gets at least one when total ≥ 9) */
export function eventsPerSource(total: number): Record<SeedSource, number> {
  const sources = Object.keys(SOURCE_SHARES) as SeedSource[];
  const counts = {} as Record<SeedSource, number>;
  let assigned = 0;
  for (const s of sources) {
    counts[s] = total >= sources.length ? Math.max(1, Math.floor(total * SOURCE_SHARES[s])) : 0;
    assigned += counts[s];
  }
  counts["cloudflare.logs.prod"] += total - assigned;
  return counts;
}
