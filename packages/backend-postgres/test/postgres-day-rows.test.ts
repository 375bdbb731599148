import { describe, expect, it } from "vitest";
import { DayRowsBuilder } from "../src/postgres-day-rows.ts";

describe("DayRowsBuilder", () => {
  it("groups rows by day in first-seen order, each day in time order, ties in input order", () => {
    const rows = new DayRowsBuilder();
    rows.add(20_100, 30n, "c", 1);
    rows.add(20_099, 5n, "old", 2);
    rows.add(20_100, 10n, "a", 3);
    rows.add(20_100, 20n, "b1", 4);
    rows.add(20_100, 20n, "b2", 5);
    expect(rows.build()).toEqual([
      { day: 20_100, text: "a\nb1\nb2\nc\n", rowLines: [3, 4, 5, 1] },
      { day: 20_099, text: "old\n", rowLines: [2] },
    ]);
  });
});
