import { describe, expect, it } from "vitest";
import { ApiKeyVerifier, hashToken, ingestKey, parseApiKeys } from "../src/auth/api-keys.ts";
import { authorize, authorizeIngest } from "../src/auth/authenticate.ts";
import { principalAllows, principalMayIngest } from "../src/auth/principal.ts";
import { refusal } from "./fixtures/refusal.ts";

const endpoint = { name: "logs.all", id: "6a3c1f0e-2b7d-4c58-9e41-0d8f5b2a7c19" } as Parameters<
  typeof principalAllows
>[1];

describe("QES_INGEST_KEYS", () => {
  const verifier = new ApiKeyVerifier([
    ...parseApiKeys("query-token-0123456789"),
    ...parseApiKeys(
      `ingest-any-0123456789, ingest-some-0123456789@postgREST.logs.prod|storage.logs.prod.2, sha256=${hashToken("ingest-hashed-0123456789").toString("hex")}@edge`,
      "QES_INGEST_KEYS",
    ),
  ]);

  it("gives ingest tokens the right to send events, to the sources named after @, and no query", () => {
    const any = verifier.verify("ingest-any-0123456789");
    expect(any && principalMayIngest(any, "anything.at.all")).toBe(true);
    expect(any && principalAllows(any, endpoint)).toBe(false);
    const some = verifier.verify("ingest-some-0123456789");
    expect(some && principalMayIngest(some, "postgREST.logs.prod")).toBe(true);
    expect(some && principalMayIngest(some, "storage.logs.prod.2")).toBe(true);
    expect(some && principalMayIngest(some, "postgrest.logs.prod")).toBe(false);
    const hashed = verifier.verify("ingest-hashed-0123456789");
    expect(hashed && principalMayIngest(hashed, "edge")).toBe(true);
  });

  it("a query token may not ingest and an ingest token may not query: 403 naming why", () => {
    const query = verifier.verify("query-token-0123456789");
    if (!query) throw new Error("query token not accepted");
    expect(principalMayIngest(query, "edge")).toBe(false);
    const e = refusal(() => authorizeIngest(query, "edge"));
    expect(e.code).toBe("forbidden");
    expect(e.message).toMatch(/QES_INGEST_KEYS/);
    const ingest = verifier.verify("ingest-any-0123456789");
    if (!ingest) throw new Error("ingest token not accepted");
    const q = refusal(() => authorize(ingest, endpoint.name, endpoint));
    expect(q.code).toBe("forbidden");
    expect(q.message).toMatch(/ingest token/);
    const some = verifier.verify("ingest-some-0123456789");
    if (!some) throw new Error("scoped ingest token not accepted");
    expect(refusal(() => authorizeIngest(some, "edge")).message).toContain('"edge"');
  });

  it("a token listed in both variables has both rights", () => {
    const both = new ApiKeyVerifier([
      ...parseApiKeys("both-token-0123456789@logs.all"),
      ...parseApiKeys("both-token-0123456789@edge", "QES_INGEST_KEYS"),
    ]).verify("both-token-0123456789");
    expect(both && principalAllows(both, endpoint)).toBe(true);
    expect(both && principalMayIngest(both, "edge")).toBe(true);
    expect(both && principalMayIngest(both, "other")).toBe(false);
  });

  it("takes spaces around @ as around | and , in both lists", () => {
    const spaced = new ApiKeyVerifier([
      ...parseApiKeys(" query-spaced-0123456789 @ logs.all | usage.api-counts "),
      ...parseApiKeys(" ingest-spaced-0123456789 @ edge | storage.logs ,", "QES_INGEST_KEYS"),
    ]);
    const query = spaced.verify("query-spaced-0123456789");
    expect(query?.endpoints && [...query.endpoints]).toEqual(["logs.all", "usage.api-counts"]);
    const ingest = spaced.verify("ingest-spaced-0123456789");
    expect(ingest && principalMayIngest(ingest, "storage.logs")).toBe(true);
    expect(ingest && principalMayIngest(ingest, "other")).toBe(false);
  });

  it("names QES_INGEST_KEYS in its errors and never echoes a token", () => {
    const short = refusal(() => parseApiKeys("short", "QES_INGEST_KEYS"));
    expect(short.param).toBe("QES_INGEST_KEYS");
    expect(short.message).not.toContain("short");
    const badName = refusal(() => parseApiKeys("ingest-any-0123456789@a b", "QES_INGEST_KEYS"));
    // ingest takes a source named "a b": the refusal says what a name in the list cannot hold
    expect(badName.message).toMatch(
      /"a b" after @ cannot name a source here: names in QES_INGEST_KEYS are 1 to 200 characters without spaces/,
    );
    expect(refusal(() => parseApiKeys("ingest-any-0123456789@", "QES_INGEST_KEYS")).message).toMatch(
      /"" after @ cannot name a source here/,
    );
    expect(refusal(() => parseApiKeys("ingest-any-0123456789@a\u0000b", "QES_INGEST_KEYS")).code).toBe(
      "invalid_config",
    );
  });

  it("takes a source whose name holds a separator or spaces written as a JSON string after @", () => {
    const verifier = new ApiKeyVerifier(
      parseApiKeys(
        'quoted-token-0123456789@"eu, west|1"|edge|" padded "|"a@b",other-token-0123456789@"x\\"y"',
        "QES_INGEST_KEYS",
      ),
    );
    const quoted = verifier.verify("quoted-token-0123456789");
    for (const source of ["eu, west|1", "edge", " padded ", "a@b"]) {
      expect(quoted && principalMayIngest(quoted, source), source).toBe(true);
    }
    for (const source of ["eu", " west", "padded", "a"]) {
      expect(quoted && principalMayIngest(quoted, source), source).toBe(false);
    }
    const other = verifier.verify("other-token-0123456789");
    expect(other && principalMayIngest(other, 'x"y')).toBe(true);
    // a plain name that cannot be listed says how to write it
    expect(refusal(() => parseApiKeys("ingest-any-0123456789@a b", "QES_INGEST_KEYS")).message).toContain(
      'or are written as a JSON string (@"a b")',
    );
    for (const [spec, message] of [
      ['ingest-any-0123456789@"unclosed|edge', /"unclosed\|edge is not one JSON string/],
      ['ingest-any-0123456789@"a"b', /"a"b is not one JSON string/],
      ['ingest-any-0123456789@"   "', /" {3}" after @ is no source name/],
      ['ingest-any-0123456789@"a\\u0000b"', /after @ is no source name/],
      ['ingest-any-0123456789@"__proto__"', /after @ is no source name/],
    ] as const) {
      const e = refusal(() => parseApiKeys(spec, "QES_INGEST_KEYS"));
      expect(e.message, spec).toMatch(message);
      expect(e.param).toBe("QES_INGEST_KEYS");
      expect(e.message).not.toContain("ingest-any-0123456789");
    }
  });

  it("the local credential of qes serve ingests anywhere and queries nothing", () => {
    const local = new ApiKeyVerifier([ingestKey("qes_local_abcdefghijklmnop")]).verify(
      "qes_local_abcdefghijklmnop",
    );
    expect(local && principalMayIngest(local, "cloudflare.logs.prod")).toBe(true);
    expect(local && principalAllows(local, endpoint)).toBe(false);
  });
});
