import { createHmac, createSign, generateKeyPairSync, type KeyObject } from "node:crypto";

/**
 * JWTs signed with node:crypto directly (not with the library the server verifies with), so the
 * tests hold the server to the JWT format itself.
 */
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

export type JwtAlg = "HS256" | "RS256" | "ES256" | "none";

export function signJwt(claims: Record<string, unknown>, alg: JwtAlg, key?: string | KeyObject): string {
  const input = `${b64({ alg, typ: "JWT" })}.${b64(claims)}`;
  if (alg === "none") return `${input}.`;
  if (alg === "HS256")
    return `${input}.${createHmac("sha256", key as string)
      .update(input)
      .digest("base64url")}`;
  const signer = createSign("sha256").update(input);
  const signature =
    alg === "ES256"
      ? signer.sign({ key: key as KeyObject, dsaEncoding: "ieee-p1363" })
      : signer.sign(key as KeyObject);
  return `${input}.${signature.toString("base64url")}`;
}

export function rsaKeys(): { privateKey: KeyObject; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return { privateKey, publicPem: publicKey.export({ type: "spki", format: "pem" }).toString() };
}

export function ecKeys(): { privateKey: KeyObject; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  return { privateKey, publicPem: publicKey.export({ type: "spki", format: "pem" }).toString() };
}

/** seconds since the epoch, `offset` seconds from now */
export const epoch = (offset = 0) => Math.floor(Date.now() / 1000) + offset;
