import { isIP } from "node:net";
import { BUILTIN_SOURCES } from "@qes/core";
import { parse } from "lossless-json";
import { describe, expect, it } from "vitest";
import { eventsPerSource, generateEvents } from "../src/seed/generate-events.ts";
import { SEED_PROJECTS } from "../src/seed/projects.ts";

const NOW = 1736942400000000n; // 2025-01-15T12:00:00Z

describe("generateEvents", () => {
  it("is deterministic for a seed and differs between seeds", () => {
    const a = [...generateEvents("cloudflare.logs.prod", 50, 7, NOW)];
    expect([...generateEvents("cloudflare.logs.prod", 50, 7, NOW)]).toEqual(a);
    expect([...generateEvents("cloudflare.logs.prod", 50, 8, NOW)]).not.toEqual(a);
  });

  it.each(BUILTIN_SOURCES)("writes valid NDJSON events for %s", (source) => {
    for (const line of generateEvents(source, 200, 1, NOW)) {
      const e = JSON.parse(line);
      expect(typeof e.id).toBe("string");
      expect(typeof e.event_message).toBe("string");
      expect(Date.parse(e.timestamp)).toBeLessThanOrEqual(Number(NOW / 1000n));
      expect(typeof e.metadata).toBe("object");
    }
  });

  it("spreads edge requests over projects, API areas, IPv4 and IPv6, dense in the last hour", () => {
    const events = [...generateEvents("cloudflare.logs.prod", 2000, 1, NOW, { spread: { days: 7 } })].map(
      (l) => JSON.parse(l),
    );
    const projects = new Set(events.map((e) => e.project));
    expect([...projects].sort()).toEqual([...SEED_PROJECTS].sort());
    for (const e of events) {
      expect(e.metadata.request.url).toContain(`https://${e.project}.supabase.co/`);
      expect(e.event_message).toContain(e.metadata.request.headers.x_real_ip);
    }
    const paths = events.map((e) => e.metadata.request.path as string);
    for (const area of ["/rest", "/storage", "/auth", "/realtime", "/functions", "/graphql", "/pg"]) {
      expect(paths.some((p) => p.startsWith(area))).toBe(true);
    }
    const ips = events.map((e) => e.metadata.request.headers.cf_connecting_ip as string);
    expect(ips.some((ip) => isIP(ip) === 4)).toBe(true);
    expect(ips.some((ip) => isIP(ip) === 6)).toBe(true);
    const hourAgo = Number(NOW / 1000n) - 3600_000;
    const lastHour = events.filter((e) => Date.parse(e.timestamp) >= hourAgo).length;
    expect(lastHour / events.length).toBeGreaterThan(0.25);
    const oldest = Math.min(...events.map((e) => Date.parse(e.timestamp)));
    expect(oldest).toBeLessThan(Number(NOW / 1000n) - 5 * 86_400_000);
    expect(new Set(events.map((e) => e.metadata.response.status_code)).size).toBeGreaterThan(5);
  });

  it("writes PostgreSQL query ids beyond 2^53 as exact integers", () => {
    const ids = [...generateEvents("postgres.logs", 50, 1, NOW)].map(
      (l) =>
        (parse(l) as { metadata: { parsed: { query_id: { value: string } } } }).metadata.parsed.query_id
          .value,
    );
    expect(ids.some((v) => BigInt(v) > 2n ** 53n || BigInt(v) < -(2n ** 53n))).toBe(true);
  });

  it("keeps the last-seconds spread inside the window", () => {
    for (const line of generateEvents("gotrue.logs.prod", 100, 3, NOW, { spread: { lastSeconds: 3 } })) {
      const t = Date.parse(JSON.parse(line).timestamp);
      expect(t).toBeGreaterThanOrEqual(Number(NOW / 1000n) - 3000);
    }
  });
});

describe("eventsPerSource", () => {
  it("splits a total over the nine sources exactly", () => {
    const counts = eventsPerSource(20_000);
    expect(Object.keys(counts)).toHaveLength(9);
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).toBe(20_000);
    expect(counts["cloudflare.logs.prod"]).toBeGreaterThan(10_000);
  });
});
