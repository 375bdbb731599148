import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { QesError } from "@qes/core";
import { afterAll, describe, expect, it } from "vitest";
import { ApiKeyVerifier, hashToken, parseApiKeys } from "../src/auth/api-keys.ts";
import { resolveApiKeys } from "../src/auth/configured-keys.ts";

const dir = mkdtempSync(join(tmpdir(), "qes-keys-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("QES_API_KEYS", () => {
  it("accepts plain tokens and sha256 hashes, each optionally limited to endpoints", () => {
    const other = "another-token-abcdefgh";
    const keys = parseApiKeys(
      `token-one-0123456789, sha256=${hashToken(other).toString("hex")}@usage.api-counts|logs.all`,
    );
    const verifier = new ApiKeyVerifier(keys);
    expect(verifier.verify("token-one-0123456789")).toEqual({
      caller: `key:${hashToken("token-one-0123456789").toString("hex")}`,
    });
    expect([...(verifier.verify(other)?.endpoints ?? [])]).toEqual(["usage.api-counts", "logs.all"]);
    expect(verifier.verify("token-one-012345678")).toBeUndefined();
    expect(verifier.verify("")).toBeUndefined();
    expect(verifier.verify(undefined)).toBeUndefined();
  });

  it("keeps only hashes", () => {
    const keys = parseApiKeys("token-one-0123456789");
    expect(JSON.stringify(keys)).not.toContain("token-one");
    expect(keys[0]?.hash.equals(hashToken("token-one-0123456789"))).toBe(true);
  });

  it.each(["short", "has space in it 0123", "sha256=abc", "good-token-0123456789@bad name", ","])(
    "refuses %j without echoing it",
    (spec) => {
      let error: unknown;
      try {
        parseApiKeys(spec);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(QesError);
      expect((error as QesError).code).toBe("invalid_config");
      expect((error as QesError).message).toContain("QES_API_KEYS");
      if (spec.length > 8) expect((error as QesError).message).not.toContain(spec.split("@")[0]);
    },
  );
});

describe("generated token", () => {
  it("is created once in a 0600 file and read back afterwards", async () => {
    const file = join(dir, "data", "api-key");
    const first = await resolveApiKeys(undefined, file);
    expect(first.generated?.created).toBe(true);
    expect(first.generated?.token).toMatch(/^[A-Za-z0-9_-]{16,}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8").trim()).toBe(first.generated?.token);
    const second = await resolveApiKeys(undefined, file);
    expect(second.generated).toMatchObject({ token: first.generated?.token, created: false });
    expect(new ApiKeyVerifier(second.keys).verify(first.generated?.token)).toBeDefined();
  });

  it("is not generated when QES_API_KEYS is set", async () => {
    const resolved = await resolveApiKeys("token-one-0123456789", join(dir, "unused"));
    expect(resolved.generated).toBeUndefined();
  });
});
