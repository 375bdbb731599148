import jwt from "jsonwebtoken";
import { describe, expect, it } from "vitest";
import { ApiKeyVerifier, hashToken, parseApiKeys } from "../src/auth/api-keys.ts";
import { JwtVerifier } from "../src/auth/jwt.ts";

const SECRET = "principal-test-secret-0123456789abcdef";
const verifier = new JwtVerifier({ secret: SECRET });
const sign = (claims: Record<string, unknown>) => jwt.sign(claims, SECRET, { algorithm: "HS256" });

describe("Principal: the caller admission control counts", () => {
  it("is the token's hash for a static key, never the token", () => {
    const token = "principal-token-0123456789";
    const principal = new ApiKeyVerifier(parseApiKeys(token)).verify(token);
    expect(principal?.caller).toBe(`key:${hashToken(token).toString("hex")}`);
    expect(principal?.caller).not.toContain(token);
  });

  it("is the subject for JWTs: two tokens of one subject are one caller, of two subjects two", () => {
    const a1 = verifier.verify(sign({ sub: "alice", scope: "query" }));
    const a2 = verifier.verify(sign({ sub: "alice", scope: "query:logs.all", iat: 1 }));
    const b = verifier.verify(sign({ sub: "bob", scope: "query" }));
    expect(a1?.caller).toBe("jwt:alice");
    expect(a2?.caller).toBe("jwt:alice");
    expect(b?.caller).toBe("jwt:bob");
  });

  it("is the token's own hash for a JWT without a subject, distinct from any subject's", () => {
    const token = sign({ scope: "query" });
    const principal = verifier.verify(token);
    expect(principal?.caller).toBe(`jwt#${hashToken(token).toString("hex")}`);
    // a subject cannot be chosen to collide with it
    expect(
      verifier.verify(sign({ sub: `#${hashToken(token).toString("hex")}`, scope: "query" }))?.caller,
    ).not.toBe(principal?.caller);
  });
});

describe("JWT scope (RFC 6749 §3.3: entries separated by ASCII spaces only)", () => {
  const endpointsOf = (scope: string) => [...(verifier.verify(sign({ sub: "s", scope }))?.endpoints ?? [])];

  it("splits on one or more ASCII spaces", () => {
    expect(endpointsOf("query:logs.all  query:usage.api-counts")).toEqual(["logs.all", "usage.api-counts"]);
  });

  it("does not split on a no-break space, a newline, a tab or other Unicode spaces", () => {
    for (const sep of ["\u00a0", "\n", "\t", "\r\n", "\u2003", "\u3000", "\u000b", "\u000c"]) {
      const scope = `query:logs.all${sep}query:usage.api-counts`;
      expect(endpointsOf(scope), JSON.stringify(sep)).toEqual([scope.slice("query:".length)]);
    }
  });

  it("a separator that is not a space cannot turn a narrow scope into `query` (every endpoint)", () => {
    const principal = verifier.verify(sign({ sub: "s", scope: "query:logs.all\u00a0query" }));
    expect(principal?.endpoints).toBeDefined();
    expect([...(principal?.endpoints ?? [])]).toEqual(["logs.all\u00a0query"]);
  });
});
