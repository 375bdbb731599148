import { TOKEN } from "./in-process.ts";

/**
 * Sum of the samples of `name` in a Prometheus text exposition whose labels include every
 * `labels` pair.
 */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const l of (m[3] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      found[l[1] as string] = (l[2] as string).replace(/\\(.)/g, "$1");
    }
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) sum += Number(m[4]);
  }
  return sum;
}

/** GET <url>/metrics with a token that may run every endpoint (/metrics names them all) */
export async function scrape(url: string, token = TOKEN): Promise<string> {
  const res = await fetch(`${url}/metrics`, { headers: { "X-API-KEY": token } });
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return res.text();
}
