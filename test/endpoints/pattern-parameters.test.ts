import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { EndpointRegistry } from "@qes/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BACKENDS, type BackendHandle } from "../support/backends.ts";
import { builtinRegistry, ndjson, runEndpoint } from "../support/run-endpoint.ts";

// A pattern parameter means the same on every backend whatever its value, including where a
// dialect answers a plain one without its regex engine (PostgreSQL: strpos, decided once per
// query). Expected ids are written from RE2's semantics, not computed by the code under test.

const DIR = join(fileURLToPath(new URL(".", import.meta.url)), "pattern-params");

const URLS: Record<string, string> = {
  u1: "https://alpha.supabase.co/rest/v1/todos?select=*",
  u2: "https://beta.supabase.co/auth/v1/token",
  u3: "https://alphabet.example/abc/100%/under_score",
  u4: "https://gamma.supabase.co/storage/v1/日本語.png",
  u5: "https://delta.supabase.co/back\\slash/a.c",
  u6: "https://ALPHA.supabase.co/rest/v1/upper",
  // RE2's dot does not match a newline (ClickHouse's does unless told: its pattern is bound so)
  u7: "https://eps.example/a\nc",
};

function edge(id: string, url: string) {
  const path = url.replace(/^https:\/\/[^/]+/, "");
  return {
    id,
    timestamp: "2025-01-15T11:00:00Z",
    project: "p",
    event_message: url,
    metadata: { request: { url, path } },
  };
}

const CASES: [pattern: string | undefined, ids: string[], pathMatches: string[]][] = [
  // absent: bound as NULL, and REGEXP_CONTAINS(x, NULL) is NULL, so no row passes
  [undefined, [], []],
  ["alpha", ["u1", "u3"], []],
  ["ALPHA", ["u6"], []],
  ["", ["u1", "u2", "u3", "u4", "u5", "u6", "u7"], ["u1", "u2", "u3", "u4", "u5", "u6", "u7"]],
  ["100%", ["u3"], ["u3"]],
  ["under_score", ["u3"], ["u3"]],
  ["日本", ["u4"], ["u4"]],
  ["/rest/", ["u1", "u6"], ["u1", "u6"]],
  ["a.c", ["u3", "u5"], ["u3", "u5"]],
  ["a\\.c", ["u5"], ["u5"]],
  ["back\\\\slash", ["u5"], ["u5"]],
  ["^https://alpha", ["u1", "u3"], []],
  ["auth|storage", ["u2", "u4"], ["u2", "u4"]],
  ["(?i)alpha\\.", ["u1", "u6"], []],
  ["[b]eta", ["u2"], []],
  ["l{2}", [], []],
  ["todos\\?select", ["u1"], ["u1"]],
  ["nowhere", [], []],
];

describe.each(BACKENDS)("a pattern parameter on $name", (fixture) => {
  let handle: BackendHandle;
  let registry: EndpointRegistry;

  beforeAll(async () => {
    handle = await fixture.create();
    registry = await builtinRegistry(DIR);
    await handle.backend.load(
      "cloudflare.logs.prod",
      ndjson(Object.entries(URLS).map(([id, url]) => edge(id, url))),
    );
  });
  afterAll(async () => {
    await handle?.dispose();
  });

  it.each(CASES)("%j filters, matches and counts as RE2 reads it", async (pattern, ids, pathMatches) => {
    const { rows } = await runEndpoint(handle.backend, registry, "urls.matching", { pattern });
    expect(rows).toEqual(
      ids.map((id) => ({
        id,
        shown: pattern ?? null,
        path_matches: pathMatches.includes(id),
        matching: ids.length,
      })),
    );
  });
});
