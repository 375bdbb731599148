import { ingestHorizonDays, type LogEvent } from "@qes/core";
import { describe, expect, it } from "vitest";
import { boundedBefore, checkEventDays } from "../src/ingest/day-limit.ts";
import { dayLimitRetentionWarnings } from "../src/retention/retention-day-limit.ts";

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

  it("bounds the days before midnight UTC 797 days before today, at any time of today; the route refuses none of the past", () => {
    for (const now of [micros("2025-01-15T00:00:00Z"), micros("2025-01-15T23:59:59.999Z")]) {
      const edge = micros("2022-11-10T00:00:00Z");
      expect(boundedBefore(now, { horizonDays })).toBe(edge);
      expect((micros("2025-01-15T00:00:00Z") - edge) / DAY).toBe(797n);
      // how many days a source holds is the store's to check (it knows them): a backfill of
      // years passes the route's checks
      expect(() =>
        checkEventDays(
          [at(now), at(edge), at(edge - 1n), at(micros("2001-01-01T00:00:00Z"))],
          now,
          [1, 3, 7, 9],
        ),
      ).not.toThrow();
    }
    expect(boundedBefore(micros("2025-01-15T00:00:00Z"))).toBeUndefined();
  });
});
