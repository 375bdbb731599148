import type { Backend, FieldNode, SourceSchema, WireValue } from "@qes/core";
import { describe, expect, it } from "vitest";
import { BACKENDS } from "../support/backends.ts";
import { ingestBatch as batch } from "../support/ingest-batch.ts";
import { mulberry32 } from "../support/prng.ts";
import { runSql } from "../support/run-sql.ts";
import { useBackend } from "../support/use-backend.ts";

/**
 * What a source stores does not depend on how its events were grouped into requests: a sequence
 * of events sent as one request gives the same rows to `select *`, the same fields of records
 * (two levels down) to UNNEST, and the same schema as the same sequence sent as one request per
 * event, as random chunks of requests, or as one call of one batch per event (a group commit). The events are random, over two fields at top level and in
 * `metadata` whose values conflict from event to event.
 *
 * Two departures are inherent to how a top-level field is stored, and are allowed only in the
 * exact form they take (`inherentDeparture`); a nested field is read from its top-level
 * record's JSON text when it widens, which keeps the value as sent.
 */

const CASES = 100;
const FIELDS = ["a", "b"];

type Rng = () => number;

const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;

/** A scalar literal: small integers, integers past 2^53 and INT64, floats, strings, bools, null. */
function scalar(rng: Rng): string {
  return pick(rng, [
    () => String(Math.floor(rng() * 200) - 100),
    () => pick(rng, ["9007199254740993", "-9223372036854775808", "18446744073709551616"]),
    () => pick(rng, ["0.5", "-2.25", "1e21", "1.0", "3e-7"]),
    () => JSON.stringify(pick(rng, ["x", "", "1", "true", "[]", "{}", "null"])),
    () => pick(rng, ["true", "false"]),
    () => "null",
  ])();
}

/**
 * A value literal of any shape, at most `depth` levels of objects and arrays: empty arrays and
 * objects, `[null]`, objects, arrays of scalars, of objects, of anything (mixed, nested arrays).
 */
function value(rng: Rng, depth: number): string {
  const r = rng();
  if (depth <= 0 || r < 0.35) return scalar(rng);
  if (r < 0.45) return pick(rng, ["[]", "{}", "[null]", "[null,null]"]);
  if (r < 0.65) return object(rng, depth - 1);
  const kind = rng();
  const element = () =>
    kind < 0.3 ? scalar(rng) : kind < 0.6 ? object(rng, depth - 1) : value(rng, depth - 1);
  return `[${Array.from({ length: 1 + Math.floor(rng() * 3) }, element).join(",")}]`;
}

function object(rng: Rng, depth: number): string {
  const keys = FIELDS.filter(() => rng() < 0.6);
  return `{${keys.map((k) => `${JSON.stringify(k)}:${value(rng, depth)}`).join(",")}}`;
}

/** One event: some of the fields at top level and inside `metadata` (at times `[]`, `{}`, null). */
function event(rng: Rng, i: number): string {
  const parts = [`"id":"e${i}"`, `"event_message":"m"`];
  for (const f of FIELDS) if (rng() < 0.6) parts.push(`${JSON.stringify(f)}:${value(rng, 2)}`);
  if (rng() < 0.7) parts.push(`"metadata":${rng() < 0.1 ? pick(rng, ["[]", "null", "{}"]) : object(rng, 2)}`);
  return `{${parts.join(",")}}`;
}

interface Case {
  seed: number;
  events: string[];
  /**
   * the other grouping of the same events, compared with one request of them all: the
   * `Backend.ingest` calls, each a list of batches (a request's events)
   */
  split: { name: string; calls: string[][][] };
}

function generate(seed: number): Case {
  const rng = mulberry32(seed);
  const events = Array.from({ length: 2 + Math.floor(rng() * 6) }, (_, i) => event(rng, i));
  const chunks: string[][] = [];
  for (let i = 0; i < events.length; ) {
    const n = 1 + Math.floor(rng() * 3);
    chunks.push(events.slice(i, i + n));
    i += n;
  }
  const split = [
    { name: "each", calls: events.map((e) => [[e]]) },
    { name: "chunks", calls: chunks.map((c) => [c]) },
    // a request per event committed together (a group commit): one call, a batch per event
    { name: "batches", calls: [events.map((e) => [e])] },
  ][seed % 3]!;
  return { seed, events, split };
}

/** A schema's fields without their columns (allocated in the order the changes came in). */
function shape(fields: Readonly<Record<string, FieldNode>> | undefined): unknown {
  if (fields === undefined) return undefined;
  return Object.fromEntries(
    Object.entries(fields)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, node]) => {
        const { column: _column, fields: inner, ...rest } = node;
        return [name, { ...rest, ...(inner ? { fields: shape(inner) } : {}) }];
      }),
  );
}

/**
 * True for the two ways a top-level field that ended as STRING may hold, for a value stored before
 * it widened, other text than one request gives it (the value was stored in a form that no longer
 * holds the text sent):
 * - an object sent while the field was records was stored as an array of one (`[{…}]`, as every
 *   top-level records value is written), and widening it to STRING keeps that text;
 * - an integer stored as INT64 and converted to FLOAT64 by a later float is a double, and
 *   widening it to STRING spells the double (`-9223372036854776000`, not `-9223372036854775808`).
 */
function inherentDeparture(node: FieldNode | undefined, want: WireValue, got: WireValue): boolean {
  if (node?.kind !== "scalar" || node.type !== "STRING") return false;
  if (typeof want !== "string" || typeof got !== "string") return false;
  if (want.startsWith("{") && got === `[${want}]`) return true;
  return /^-?\d+$/.test(want) && got === String(Number(want));
}

interface Stored {
  rows: Record<string, WireValue>[];
  schema?: SourceSchema;
}

describe.each(BACKENDS)("ingest grouping on $name", (fixture) => {
  let backend: Backend;
  useBackend(fixture, (b) => (backend = b));

  async function stored(source: string): Promise<Stored> {
    const schema = (await backend.schema()).sources[source];
    const rows = await runSql(backend, `select * from \`${source}\` order by id`);
    // the fields of records (two levels down) as UNNEST reads them: most have a typed column
    const inside: Record<string, WireValue>[] = [];
    const unnest = async (joins: string[], fields: Readonly<Record<string, FieldNode>>, as: string) => {
      const names = Object.keys(fields);
      if (names.length === 0) return;
      const alias = `x${joins.length}`;
      const select = names.map((f) => `${alias}.${f} as ${as}_${f}`).join(", ");
      inside.push(
        ...(await runSql(
          backend,
          `select t.id, ${select} from \`${source}\` as t ${joins.join(" ")} order by t.id`,
        )),
      );
      if (joins.length === 1)
        for (const [name, node] of Object.entries(fields))
          if (node.fields)
            await unnest(
              [...joins, `left join unnest(${alias}.${name}) as x2 on true`],
              node.fields,
              `${as}_${name}`,
            );
    };
    for (const [name, node] of Object.entries(schema?.fields ?? {}))
      if (node.fields) await unnest([`left join unnest(t.${name}) as x1 on true`], node.fields, name);
    return { rows: [...rows, ...inside], schema };
  }

  it(`stores the same rows and schema for ${CASES} random sequences sent as one request or split`, async () => {
    const cases = Array.from({ length: CASES }, (_, i) => generate(i + 1));
    // every case's two sources take their requests together: a call per step, a batch per case
    await backend.ingest(cases.map((c) => batch(`g${c.seed}.one`, c.events)));
    for (let step = 0; cases.some((c) => c.split.calls.length > step); step++)
      await backend.ingest(
        cases.flatMap((c) => (c.split.calls[step] ?? []).map((events) => batch(`g${c.seed}.split`, events))),
      );
    const differences: unknown[] = [];
    for (const c of cases) {
      const one = await stored(`g${c.seed}.one`);
      const split = await stored(`g${c.seed}.split`);
      const where = { seed: c.seed, split: c.split.name, events: c.events };
      if (JSON.stringify(shape(one.schema?.fields)) !== JSON.stringify(shape(split.schema?.fields)))
        differences.push({
          ...where,
          schema: shape(one.schema?.fields),
          splitSchema: shape(split.schema?.fields),
        });
      one.rows.forEach((row, i) => {
        for (const [field, want] of Object.entries(row)) {
          const got = split.rows[i]?.[field];
          if (JSON.stringify(got) === JSON.stringify(want)) continue;
          if (inherentDeparture(one.schema?.fields[field], want, got ?? null)) continue;
          differences.push({ ...where, id: row.id, field, want, got });
        }
      });
      if (split.rows.length !== one.rows.length)
        differences.push({ ...where, rows: one.rows.length, splitRows: split.rows.length });
    }
    expect(differences).toEqual([]);
  }, 300_000);
});
