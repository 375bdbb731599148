import { describe, expect, it } from "vitest";
import { queryWindow } from "../src/index.ts";

const DAY = 86_400_000_000n;

describe("queryWindow", () => {
  it("reads the window of a negative interval added to now as far back as the one subtracted", () => {
    const from = (cut: string) =>
      queryWindow(`select id from \`cloudflare.logs.prod\` as t where t.timestamp > ${cut}`)
        .longestIntervalMicros;
    expect(from("timestamp_sub(current_timestamp(), interval 14 day)")).toBe(14n * DAY);
    expect(from("timestamp_add(current_timestamp(), interval -14 day)")).toBe(14n * DAY);
    expect(from("timestamp_add(current_timestamp(), interval - 2 week)")).toBe(14n * DAY);
  });
});
