import { describe, expect, it } from "vitest";
import {
  parseTimeFormat,
  readsInstant,
  trailingOffset,
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

  it("splits a trailing offset element off, and only a trailing one", () => {
    expect(trailingOffset("%Y-%m-%dT%H:%M:%E*S%Ez")).toEqual({ civil: "%Y-%m-%dT%H:%M:%E*S" });
    expect(trailingOffset("%d/%b/%Y:%H:%M:%S %z")).toEqual({ civil: "%d/%b/%Y:%H:%M:%S " });
    expect(trailingOffset("100%% %H%z")).toEqual({ civil: "100%% %H" });
    expect(trailingOffset("%z %H")).toBeUndefined();
    expect(trailingOffset("%H:%M")).toBeUndefined();
  });

  it("reads %E*S as %S for text without a fraction", () => {
    expect(withoutFraction("%H:%M:%E*S UTC")).toBe("%H:%M:%S UTC");
    expect(withoutFraction("%H:%M:%E6S")).toBeUndefined();
  });
});
