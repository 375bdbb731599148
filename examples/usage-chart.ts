/**
 * The last hour of API usage of a project as a text chart, one line per minute, from
 * `usage.api-counts` (interval `minutely`). Run against the quick-start server:
 *
 *   npx -y pnpm@10 example usage-chart [--project <ref>] [--width <columns>]
 *
 * QES_URL, QES_API_KEY and QES_PROJECT choose the server, token and project (examples/connection.ts).
 */
import { createClient, QesApiError, type UsageRow } from "@qes/sdk";
import { connection, flag } from "./connection.ts";

const SERIES = [
  { key: "total_rest_requests", label: "rest", mark: "█" },
  { key: "total_storage_requests", label: "storage", mark: "▓" },
  { key: "total_auth_requests", label: "auth", mark: "▒" },
  { key: "total_realtime_requests", label: "realtime", mark: "░" },
] as const satisfies ReadonlyArray<{ key: keyof UsageRow; label: string; mark: string }>;

/** The chart as lines: a heading, a legend, 60 minute lines ending at `now`'s minute, a total. */
export function renderUsageChart(
  rows: UsageRow[],
  opts: { project: string; now: Date; width: number },
): string[] {
  const byMinute = new Map(rows.map((r) => [r.timestamp.slice(0, 16), r]));
  const end = Math.floor(opts.now.getTime() / 60_000) * 60_000;
  const minutes = Array.from({ length: 60 }, (_, i) =>
    new Date(end - (59 - i) * 60_000).toISOString().slice(0, 16),
  );
  const totalOf = (r: UsageRow | undefined) => (r ? SERIES.reduce((n, s) => n + r[s.key], 0) : 0);
  const max = Math.max(1, ...minutes.map((m) => totalOf(byMinute.get(m))));
  const sums = SERIES.map((s) =>
    rows.filter((r) => minutes.includes(r.timestamp.slice(0, 16))).reduce((n, r) => n + r[s.key], 0),
  );

  const lines = [
    `Requests per minute, last hour (UTC), project ${opts.project}`,
    `  ${SERIES.map((s) => `${s.mark} ${s.label}`).join("   ")}    (one column = ${fmt(max / opts.width)} requests)`,
  ];
  for (const minute of minutes) {
    const row = byMinute.get(minute);
    const total = totalOf(row);
    let bar = "";
    let cumulative = 0;
    for (const s of SERIES) {
      // cumulative rounding keeps the bar's length proportional to the total
      const before = Math.round((cumulative / max) * opts.width);
      cumulative += row ? row[s.key] : 0;
      bar += s.mark.repeat(Math.round((cumulative / max) * opts.width) - before);
    }
    lines.push(`${minute.slice(11)} │${bar.padEnd(opts.width)}│ ${total === 0 ? "" : total}`.trimEnd());
  }
  const total = sums.reduce((a, b) => a + b, 0);
  lines.push(`total ${total}: ${SERIES.map((s, i) => `${s.label} ${sums[i]}`).join(", ")}`);
  return lines;
}

function fmt(n: number): string {
  return n >= 10 ? String(Math.round(n)) : String(Math.round(n * 10) / 10);
}

export async function main(argv: string[]): Promise<number> {
  const conn = connection();
  const project = flag(argv, "project", conn.project);
  const width = Number(flag(argv, "width", "50"));
  const qes = createClient({ baseUrl: conn.baseUrl, apiKey: conn.apiKey, timeoutMs: 15_000 });
  try {
    const { rows } = await qes.usageApiCounts({ project, interval: "minutely" });
    const now = process.env.QES_NOW ? new Date(process.env.QES_NOW) : new Date();
    console.log(
      renderUsageChart(rows, { project, now, width: Number.isFinite(width) && width > 0 ? width : 50 }).join(
        "\n",
      ),
    );
    return 0;
  } catch (e) {
    console.error(describeError(e, conn.baseUrl));
    return 1;
  }
}

export function describeError(e: unknown, baseUrl: string): string {
  if (e instanceof QesApiError) {
    if (e.code === "network_error")
      return `qes does not answer at ${baseUrl}: start it with  npx -y pnpm@10 qes serve`;
    const where = e.param
      ? ` (parameter ${e.param}${e.allowed ? `: one of ${e.allowed.join(", ")}` : ""})`
      : "";
    return `qes answered ${e.status || ""} ${e.code}: ${e.message}${where} [request ${e.requestId}]`;
  }
  return String(e instanceof Error ? e.message : e);
}
