import { QesError } from "@qes/core";
import jwt from "jsonwebtoken";
import { describe, expect, it } from "vitest";
import { JwtVerifier } from "../src/auth/jwt.ts";
import { loadConfig } from "../src/config.ts";

// One identity provider's key often signs tokens for several services. With QES_JWT_AUDIENCE /
// QES_JWT_ISSUER set, a token signed by that key but issued for another service is refused.
const SECRET = "a-secret-of-at-least-32-characters-for-hs256";
const sign = (claims: object, secret = SECRET) =>
  jwt.sign({ scope: "query", ...claims }, secret, { algorithm: "HS256" });

function refusal(verifier: JwtVerifier, token: string): QesError | undefined {
  try {
    verifier.verify(token);
  } catch (e) {
    expect(e).toBeInstanceOf(QesError);
    return e as QesError;
  }
  return undefined;
}

describe("JWT audience and issuer", () => {
  it("are not checked unless configured (tokens of every audience and issuer verify)", () => {
    const verifier = new JwtVerifier({ secret: SECRET });
    expect(verifier.verify(sign({ aud: "billing", iss: "https://idp.example.com" }))).toBeDefined();
    expect(verifier.verify(sign({}))).toBeDefined();
  });

  it("with audiences set, take a token whose aud names one of them, and refuse any other with a reason", () => {
    const verifier = new JwtVerifier({ secret: SECRET, audiences: ["qes", "logs-api"] });
    expect(verifier.verify(sign({ aud: "logs-api" }))).toBeDefined();
    expect(verifier.verify(sign({ aud: ["billing", "qes"] }))).toBeDefined();
    for (const claims of [{ aud: "billing" }, { aud: ["billing", "QES"] }, {}, { aud: "" }]) {
      expect(refusal(verifier, sign(claims)), JSON.stringify(claims)).toMatchObject({
        code: "unauthorized",
        message: expect.stringMatching(/audience \(aud\)/),
      });
    }
  });

  it("with issuers set, take a token of one of them, and refuse a token of another or none", () => {
    const verifier = new JwtVerifier({ secret: SECRET, issuers: ["https://idp.example.com"] });
    expect(verifier.verify(sign({ iss: "https://idp.example.com" }))).toBeDefined();
    for (const claims of [{ iss: "https://evil.example.com" }, {}]) {
      expect(refusal(verifier, sign(claims))).toMatchObject({
        code: "unauthorized",
        message: expect.stringMatching(/issuer \(iss\)/),
      });
    }
  });

  it("say nothing about the claims of a token whose signature does not hold", () => {
    const verifier = new JwtVerifier({ secret: SECRET, audiences: ["qes"], issuers: ["me"] });
    const forged = sign({ aud: "billing", iss: "other" }, "another-secret-of-at-least-32-characters!");
    expect(refusal(verifier, forged)).toBeUndefined();
    expect(verifier.verify(forged)).toBeUndefined();
  });

  it("are read from QES_JWT_AUDIENCE and QES_JWT_ISSUER (comma-separated), and need a key", () => {
    const c = loadConfig({ QES_JWT_SECRET: SECRET, QES_JWT_AUDIENCE: "qes, logs-api", QES_JWT_ISSUER: "me" });
    expect(c.jwt).toMatchObject({ audiences: ["qes", "logs-api"], issuers: ["me"] });
    expect(loadConfig({ QES_JWT_SECRET: SECRET }).jwt.audiences).toBeUndefined();
    expect(() => loadConfig({ QES_JWT_AUDIENCE: "qes" })).toThrow(/QES_JWT_AUDIENCE/);
    expect(() => loadConfig({ QES_JWT_ISSUER: "me" })).toThrow(/QES_JWT_ISSUER/);
  });
});
