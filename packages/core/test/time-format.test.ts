import { describe, expect, it } from "vitest";
import {
  fractionDigits,
  OFFSET_RE,
  offsetSplit,
  parseTimeFormat,
  readingFormat,
  readsInstant,
  timeFormatRegex,
  withoutFraction,
} from "../src/dialect/time-format.ts";

describe("BigQuery time formats", () => {
  it("reads %Ez (one letter after %E) beside %E*S", () => {
    expect(parseTimeFormat("%H:%M:%E*S%Ez")).toEqual([
      { element: "H" },
      { literal: ":" },
      { element: "M" },
      { literal: ":" },
      { element: "E*S" },
      { element: "Ez" },
    ]);
    expect(readsInstant("%F %T%Ez")).toBe(true);
    expect(() => parseTimeFormat("%Eq")).toThrow(/%Eq/);
  });

  it("splits the text around one offset element", () => {
    const split = offsetSplit("%Y-%m-%dT%H:%M:%E*S%Ez");
    expect(split?.civil).toBe("%Y-%m-%dT%H:%M:%E*S");
    const re = new RegExp(split!.re);
    expect(" 2025-01-15T08:00:00.5+05:30 ".match(re)?.slice(1)).toEqual([
      " 2025-01-15T08:00:00.5",
      "+05:30",
      " ",
    ]);
    expect("2025-01-15T08:00:00".match(re)).toBeNull();
    const mid = offsetSplit("%a %b %d %H:%M:%S %z %Y");
    expect(mid?.civil).toBe("%a %b %d %H:%M:%S  %Y");
    expect("Wed Jan 15 08:00:00 Z 2025".match(new RegExp(mid!.re))?.slice(1)).toEqual([
      "Wed Jan 15 08:00:00 ",
      "Z",
      " 2025",
    ]);
    expect(offsetSplit("100%% %H%z")?.civil).toBe("100%% %H");
    expect(offsetSplit("%H:%M")).toBeUndefined();
  });

  it("splits the text around several offset elements, the last one applied", () => {
    const split = offsetSplit("%H:%M%z %Ez");
    expect(split?.civil).toBe("%H:%M ");
    expect(split?.keep).toBe("\\1\\3\\5");
    expect(split?.offsetGroup).toBe(4);
    expect("10:30+01 -02:30".match(new RegExp(split!.re))?.slice(1)).toEqual([
      "10:30",
      "+01",
      " ",
      "-02:30",
      "",
    ]);
    expect(() => offsetSplit("%z%z%z%z%z")).toThrow(/at most 4 offsets/);
  });

  it("reads every %E<n>S as %E*S when parsing, and expands %c", () => {
    expect(readingFormat("%H:%E3S|%E0S|%E*S|%S")).toBe("%H:%E*S|%E*S|%E*S|%S");
    expect(parseTimeFormat("%c")).toEqual(parseTimeFormat("%a %b %e %H:%M:%S %Y"));
    expect(fractionDigits("E3S")).toBe(3);
    expect(fractionDigits("E*S")).toBe("*");
    expect(fractionDigits("S")).toBeUndefined();
  });

  it("reads %E*S as %S for text without a fraction", () => {
    expect(withoutFraction("%H:%M:%E*S UTC")).toBe("%H:%M:%S UTC");
    expect(withoutFraction("%H:%M:%E6S")).toBeUndefined();
  });

  it("matches the offsets %z reads when parsing, and no others", () => {
    const re = new RegExp(`${OFFSET_RE}$`);
    for (const ok of ["Z", "+05", "+0530", "+05:30", "-23:59", "-00"]) expect(`08:00${ok}`).toMatch(re);
    for (const bad of ["+5", "+24", "+05:60", "+0599", "05:30"])
      expect(`08:00${bad}`.match(re)?.[0]).not.toBe(bad);
  });

  it("describes the whole text a format reads", () => {
    const re = new RegExp(timeFormatRegex("%Y-%m-%dT%H:%M:%E*S%Ez"));
    for (const ok of [
      "2025-01-15T08:00:00Z",
      "2025-01-15T08:00:00.123456+05:30",
      " 2025-01-15T08:00:00-0130 ",
    ])
      expect(ok).toMatch(re);
    for (const bad of [
      "2025-01-15 08:00:00Z",
      "2025-01-15T08:00Z",
      "2025-01-15T08:00:00",
      "2025-01-15T08:00:00Zjunk",
    ])
      expect(bad).not.toMatch(re);
    expect("15/Jan/2025:10:00:00   +0200").toMatch(new RegExp(timeFormatRegex("%d/%b/%Y:%H:%M:%S %z")));
    expect("1+1 = 2.5").toMatch(new RegExp(timeFormatRegex("1+1 = %E*S")));
  });
});
