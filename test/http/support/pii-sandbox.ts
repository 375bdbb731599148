import { fileURLToPath } from "node:url";

/** endpoint definitions of the redacting, sandboxable `pii.sandbox` (redactPii and sandboxable on) */
export const PII_SANDBOX_DIR = fileURLToPath(new URL("../fixtures/pii-sandbox", import.meta.url));

/**
 * Consumer SQL on `pii.sandbox` for project `pii`, as POST; the answer's text without its request
 * id, which is not the data: its hex digits held an octet's digits by chance ("8917") and failed a
 * probe that looks for them.
 */
export async function querySandbox(
  url: string,
  token: string,
  sql: string,
): Promise<{ status: number; text: string }> {
  const res = await fetch(`${url}/api/endpoints/query/pii.sandbox`, {
    method: "POST",
    headers: { "X-API-KEY": token, "Content-Type": "application/json" },
    body: JSON.stringify({ project: "pii", sql }),
  });
  const text = (await res.text()).replace(/"requestId":"[^"]*"/, '"requestId":""');
  return { status: res.status, text };
}
