import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { type ServedFixture, serveFixture } from "../support/serve-fixture.ts";
import { PII_SANDBOX_DIR, querySandbox } from "./support/pii-sandbox.ts";

// Found probing issue 12: records and arrays read from events are redacted inside the engine as
// JSON text, where a control character before an address is an escape ending in a letter or a
// digit. `\t2001:db8:cafe::17x` read as an address glued to words on both sides and stayed whole
// (or lost only its tail), so consumer SQL that unnested the array split it into pieces; and in
// `\u00011.2.3.4` the replacement began inside the escape, leaving JSON the engine refused (422)
// or read as an empty record. Real HTTP, every backend.

const TOKEN = "redact-escape-token-0123456789ab";

const VALUES = {
  tab: "\t2001:db8:cafe::17x",
  newline: "\nfe80::1b_port",
  backspace: "\b2001:db8:cafe::17x",
  control6: "\u00012001:db8:cafe::17x",
  control4: "\u0001198.51.100.23",
  escapedBackslash: "\\t2001:db8:cafe::17x",
};

const event = (name: string, value: string) =>
  JSON.stringify({
    id: `esc-${name}`,
    timestamp: "2025-01-15T11:59:00Z",
    project: "pii",
    event_message: "escapes",
    metadata: { ip_list: [value, "z"], hops: [{ address: value, note: "n" }] },
  });

/** what the pass over a decoded string leaves of each value: the same inside the engine */
const EXPECTED: Record<string, string> = {
  "esc-tab": "\tREDACTEDx",
  "esc-newline": "\nREDACTED_port",
  "esc-backspace": "\bREDACTEDx",
  "esc-control6": "\u0001REDACTEDx",
  "esc-control4": "\u0001REDACTED",
  // a backslash and a `t`, not a tab: glued to words on both sides, as the pass reads it, and
  // whole (two groups before `::`), not `\t2001:REDACTEDx` with the network prefix left
  "esc-escapedBackslash": "\\tREDACTEDx",
};

describe.each(BACKENDS)("JSON escapes before an address, on $name", (fixture) => {
  let served: ServedFixture;

  beforeAll(async () => {
    served = await serveFixture(
      fixture,
      { "cloudflare.logs.prod": Object.entries(VALUES).map(([name, value]) => event(name, value)) },
      {
        QES_TEST_NOW: "2025-01-15T12:00:00Z",
        QES_API_KEYS: TOKEN,
        QES_CACHE_MAX_ENTRIES: "0",
        QES_ENDPOINTS_DIR: PII_SANDBOX_DIR,
      },
    );
  });
  afterAll(async () => {
    await served?.close();
  });

  const query = (sql: string) => querySandbox(served.url, TOKEN, sql);

  const rows = (text: string) => JSON.parse(text).result as Array<{ id: string; x: string }>;

  it.each([
    [
      "an array unnested",
      "select id, s as x from edge cross join unnest(metadata[0].ip_list) as s where s != 'z'",
    ],
    ["records unnested", "select id, h.address as x from edge cross join unnest(metadata[0].hops) as h"],
  ])("%s: each string redacted as the pass redacts it, no piece left", async (_name, sql) => {
    const { status, text } = await query(`${sql} order by id`);
    expect(status, text).toBe(200);
    expect(Object.fromEntries(rows(text).map((r) => [r.id, r.x]))).toEqual(EXPECTED);
    const pieces = await query(`select id, split(x, ':') as p, split(x, '.') as q from (${sql}) order by id`);
    expect(pieces.status, pieces.text).toBe(200);
    for (const piece of ["2001", "cafe", "fe80", "198", "100.23"])
      expect(pieces.text, pieces.text).not.toContain(piece);
  });

  it("a whole record keeps its JSON: every row has its list", async () => {
    const { status, text } = await query("select id, metadata from edge order by id");
    expect(status, text).toBe(200);
    const result = JSON.parse(text).result as Array<{ id: string; metadata: Array<{ ip_list: string[] }> }>;
    expect(Object.fromEntries(result.map((r) => [r.id, r.metadata[0]?.ip_list[0]]))).toEqual(EXPECTED);
  });
});
