import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { ingestEnv, postLogs, storedIds } from "./support/ingest.ts";

const json = (v: unknown) => JSON.stringify(v);
const at = "2025-01-15T11:00:00Z";

/** Probes of POST /api/logs as shippers and token holders send it: every backend stores or refuses alike. */
describe.each(BACKENDS)("ingest probes on $name", (fixture) => {
  let served: ServedFixture;
  beforeAll(async () => {
    served = await serveFixture(fixture, {}, ingestEnv());
  });
  afterAll(() => served.close());

  it("a source named like another's day or index (`pp 20250115`, `qq timestamp idx`) leaves both taking events", async () => {
    const { url, backend } = served;
    // each name first, then the source whose table's own day partition or index it would name
    const pairs: [string, string][] = [
      ["pp 20250115", "pp"],
      ["qq timestamp idx", "qq"],
      ["rr", "rr project"],
    ];
    for (const [first, second] of pairs) {
      for (const source of [first, second]) {
        const r = await postLogs(url, source, json([{ id: source, timestamp: at }]));
        expect(r, source).toMatchObject({ status: 200, body: { accepted: 1 } });
      }
      expect(await storedIds(backend, first)).toEqual([first]);
      expect(await storedIds(backend, second)).toEqual([second]);
    }
    // and a later day of the shorter-named source still finds its own partition
    const later = await postLogs(url, "pp", json([{ id: "pp2", timestamp: "2025-01-14T11:00:00Z" }]));
    expect(later).toMatchObject({ status: 200, body: { accepted: 1 } });
    expect(await storedIds(backend, "pp")).toEqual(["pp", "pp2"]);
  });
});
