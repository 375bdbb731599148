import { QesError } from "@qes/core";
import type pg from "pg";
import type { DayRows } from "./postgres-day-rows.ts";
import { copyIntoPartition } from "./postgres-partition-copy.ts";

/**
 * A row PostgreSQL refuses for what it holds — too wide for a heap row (54000 "row is too big"),
 * or a value it cannot store (22xxx) — is the event's fault; the refusal names the event as every
 * other ingest refusal does. The COPY's own error cannot: its rows go in time order, and a row too
 * wide is found when COPY flushes its insert buffer, whose CONTEXT names the buffer's last line.
 */
export function isRefusedRow(e: unknown): boolean {
  const state = (e as { code?: unknown } | null)?.code;
  return (
    typeof state === "string" &&
    (state.startsWith("22") || (state === "54000" && /row is too big/.test((e as Error).message)))
  );
}

/** the 400 of a row PostgreSQL refused; `event` is its index in its request, when known */
export function refusedRowError(e: unknown, event?: number): QesError {
  const reason = (e as Error).message;
  const [subject, verb] = event === undefined ? ["an event", "has "] : [`event ${event}:`, ""];
  const message = /row is too big/.test(reason)
    ? `${subject} ${verb}more fields than a PostgreSQL row holds (${reason}): ` +
      "send fewer fields or nested objects per event, or a nested part as one JSON string"
    : `${subject} ${event === undefined ? "holds " : ""}a value PostgreSQL cannot store: ${reason}`;
  return new QesError("invalid_event", message, { cause: e, ...(event === undefined ? {} : { event }) });
}

/**
 * COPYs one day's rows as `copyIntoPartition` does, on the run of a refused call made only to
 * find the refused row (its transaction is rolled back): when PostgreSQL refuses the rows, halves
 * them under a savepoint until one row is left, and throws the refusal naming its event (the
 * row's `rowLines` entry, its index in the request). Rows refused only together leave the
 * refusal as it was.
 */
export async function copyNamingRefusedRow(
  client: pg.ClientBase,
  schema: string,
  partition: string,
  columns: readonly string[],
  rows: DayRows,
): Promise<void> {
  const texts = (typeof rows.text === "string" ? rows.text : Buffer.from(rows.text).toString("utf8")).split(
    "\n",
  );
  texts.pop(); // every row ends in a newline
  const refusal = (from: number, to: number) =>
    copyRefusal(client, schema, partition, columns, texts, from, to);
  const whole = await refusal(0, texts.length);
  if (whole === undefined) {
    await copyIntoPartition(client, schema, partition, columns, [rows.text]);
    return;
  }
  let from = 0;
  let to = texts.length;
  while (to - from > 1) {
    const middle = (from + to) >> 1;
    if ((await refusal(from, middle)) !== undefined) to = middle;
    else from = middle;
  }
  const alone = await refusal(from, from + 1);
  throw alone !== undefined && isRefusedRow(alone) ? refusedRowError(alone, rows.rowLines[from]) : whole;
}

/** PostgreSQL's refusal of COPYing rows `from`…`to` (undefined when it takes them); nothing is kept */
async function copyRefusal(
  client: pg.ClientBase,
  schema: string,
  partition: string,
  columns: readonly string[],
  texts: readonly string[],
  from: number,
  to: number,
): Promise<unknown> {
  await client.query("savepoint qes_refused_row");
  let refused: unknown;
  try {
    await copyIntoPartition(client, schema, partition, columns, [`${texts.slice(from, to).join("\n")}\n`]);
  } catch (e) {
    refused = e;
  }
  await client.query("rollback to savepoint qes_refused_row");
  return refused;
}
