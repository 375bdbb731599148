import type { LogEvent } from "@qes/core";
import { describe, expect, it } from "vitest";
import { checkEventDays, storeHorizon } from "../src/ingest/day-limit.ts";
import { dayLimitRetentionWarnings, ingestHorizonDays } from "../src/retention/retention-day-limit.ts";

const DAY = 86_400_000_000n;
const micros = (iso: string) => BigInt(Date.parse(iso)) * 1000n;
const at = (t: bigint): LogEvent => ({ id: String(t), timestamp: t, body: {} });

/** The store's day bound at its edges: PostgreSQL's default server (64 × 100 locks, 4 a day, half). */
describe("ingest's store horizon", () => {
  const limit = { days: 800, reason: "the lock table" };
  const horizonDays = ingestHorizonDays(limit);

  it("takes 797 days of the past on a default PostgreSQL server, and warns of a retention of 798", () => {
    expect(horizonDays).toBe(797);
    const warns = (days: number) => dayLimitRetentionWarnings({ defaultDays: days, perSource: {} }, limit);
    expect(warns(797)).toEqual([]);
    expect(warns(798)).toHaveLength(1);
  });

  it("takes midnight UTC 797 days before today, at any time of today, and refuses the microsecond before it, naming its line", () => {
    for (const now of [micros("2025-01-15T00:00:00Z"), micros("2025-01-15T23:59:59.999Z")]) {
      const horizon = storeHorizon(now, { horizonDays, reason: limit.reason })!;
      const edge = micros("2022-11-10T00:00:00Z");
      expect(horizon.micros).toBe(edge);
      expect((micros("2025-01-15T00:00:00Z") - edge) / DAY).toBe(797n);
      expect(() => checkEventDays([at(now), at(edge)], now, [1, 2], horizon)).not.toThrow();
      expect(() => checkEventDays([at(now), at(edge), at(edge - 1n)], now, [1, 3, 7], horizon)).toThrow(
        /^event 2 \(line 7\): "timestamp" 2022-11-09T23:59:59\.999Z is older than this store takes: a source holds at most 797 days of the past here, so events before 2022-11-10T00:00:00\.000Z are refused \(the lock table\)$/,
      );
    }
  });
});
