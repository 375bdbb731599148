/**
 * The address pattern on PostgreSQL alone: what redaction inside the engine costs per row of
 * record JSON and of `event_message`, without the rest of a consumer query. One session, a table
 * of the seeded edge events' texts, each query a `sum(length(…))` over every row, the variants
 * run in rotation (timeRotating):
 *
 * - plain: the same query without redaction (`length(m)`);
 * - one pattern: a hand-written native query doing the same replacement, `regexp_replace` with the
 *   whole address pattern under `COLLATE "C"` (what the dialect emitted before);
 * - emitted: what the PostgreSQL dialect's `__REDACT_ADDRESSES` writes now.
 *
 * The variants' answers are compared (md5 of the texts in order) before timing.
 *
 *   node --import tsx bench/redaction-postgres.ts [--edge 4000] [--runs 9]
 */
import { parseArgs } from "node:util";
import { postgresDialect } from "@qes/backend-postgres";
import { ADDRESS_PATTERN, type Expr, type FunctionEmitter, IPV6_HINT_PATTERN, REDACTED } from "@qes/core";
import pg from "pg";
import { BENCH_POSTGRES_URL } from "./lib/bench-backends.ts";
import { EDGE, ensureEventsFile, readLines } from "./lib/data.ts";
import { isMain, printSection, type Section } from "./lib/report.ts";
import { median, ms, ratio, timeRotating } from "./lib/stats.ts";

const TABLE = "pg_temp.redaction_texts";

interface Metadata {
  request?: { headers?: { x_real_ip?: string } };
}

/** the dialect's redaction of a STRING column `column` */
function emitted(column: string): string {
  const arg: Expr = { k: "col", rel: "t", col: column, type: { t: "scalar", s: "STRING" } };
  const row = postgresDialect.functions.__REDACT_ADDRESSES as FunctionEmitter;
  return row([column], { k: "call", fn: "__REDACT_ADDRESSES", args: [arg], type: arg.type }, postgresDialect);
}

export async function benchRedactionPostgres(opts: { edgeEvents: number; runs: number }): Promise<Section> {
  const file = await ensureEventsFile(EDGE, opts.edgeEvents);
  const client = new pg.Client({ connectionString: BENCH_POSTGRES_URL });
  await client.connect();
  try {
    const texts: Array<[string, string, string]> = [];
    for await (const line of readLines(file)) {
      const e = JSON.parse(line) as { metadata?: Metadata; event_message?: string };
      const ip = e.metadata?.request?.headers?.x_real_ip ?? "";
      texts.push([JSON.stringify(e.metadata ?? null), e.event_message ?? "", ip]);
    }
    await client.query(`CREATE TEMP TABLE redaction_texts (n int, m text, e text, a text)`);
    await client.query(
      `INSERT INTO ${TABLE} SELECT n, m, e, a FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS x(m, e, a, n)`,
      [texts.map((t) => t[0]), texts.map((t) => t[1]), texts.map((t) => t[2])],
    );
    await client.query(`ANALYZE ${TABLE}`);
    const pattern = postgresDialect.stringLiteral(postgresDialect.bindPattern(ADDRESS_PATTERN));
    const hint = postgresDialect.stringLiteral(postgresDialect.bindPattern(IPV6_HINT_PATTERN));
    const variants: Array<[string, (c: string) => string]> = [
      ["plain", (c) => c],
      ["one pattern", (c) => `regexp_replace(${c} COLLATE "C", ${pattern}, '${REDACTED}', 'g')`],
      ["emitted", emitted],
    ];
    const { rows: stats } = await client.query(
      `SELECT count(*) AS n, avg(length(m))::int AS m, avg(length(e))::int AS e, count(*) FILTER (WHERE m COLLATE "C" ~ ${hint}) AS hinted FROM ${TABLE}`,
    );
    const s = stats[0] as { n: string; m: number; e: number; hinted: string };
    const rows: string[][] = [];
    const notes: string[] = [];
    for (const [column, label] of [
      ["m", `record JSON (${s.m} characters on average)`],
      ["e", `event_message (${s.e} characters on average)`],
      ["a", "the client address alone (`x_real_ip`)"],
    ] as const) {
      const sums = await Promise.all(
        variants.slice(1).map(async ([, f]) => {
          const r = await client.query(
            `SELECT md5(string_agg(${f(column)}, E'\\n' ORDER BY n)) AS h FROM ${TABLE}`,
          );
          return (r.rows[0] as { h: string }).h;
        }),
      );
      if (new Set(sums).size !== 1) throw new Error(`the variants disagree on ${column}: ${sums.join(" ")}`);
      const times = await timeRotating(
        variants.map(
          ([, f]) =>
            () =>
              client.query(`SELECT sum(length(${f(column)})) FROM ${TABLE}`),
        ),
        { runs: opts.runs },
      );
      const [plain, one, now] = times.map(median) as [number, number, number];
      const perRow = (x: number) => `${((x * 1000) / Number(s.n)).toFixed(1)} µs`;
      rows.push([
        label,
        ms(plain),
        ms(one),
        ms(now),
        perRow(one - plain),
        perRow(now - plain),
        ratio(one, now),
      ]);
    }
    notes.push(
      `${s.hinted} of ${s.n} records hold the IPv6 hint (\`::\` or five \`group:\`) and take the whole pattern; the others take the IPv4 form alone. The variants' answers were identical (md5 of the texts in order).`,
    );
    return {
      title: "Address pattern on PostgreSQL alone (`bench/redaction-postgres.ts`)",
      intro: `${s.n} seeded edge events' texts in a temporary table, one session; \`SELECT sum(length(<expr>))\` over every row, median of ${opts.runs} rotated runs: the texts as they are, the whole pattern in one \`regexp_replace\` (the former emission, written by hand), and what the dialect emits now.`,
      header: [
        "text",
        "plain",
        "one pattern",
        "emitted",
        "one pattern per row",
        "emitted per row",
        "speed-up",
      ],
      rows,
      notes,
    };
  } finally {
    await client.end();
  }
}

if (isMain(import.meta.url)) {
  const { values } = parseArgs({ options: { edge: { type: "string" }, runs: { type: "string" } } });
  const section = await benchRedactionPostgres({
    edgeEvents: Number(values.edge ?? 4000),
    runs: Number(values.runs ?? 9),
  });
  printSection(section);
  process.exit(0);
}
