import type { LoadOptions, LoadSummary } from "../backend.ts";
import type { LoadIds } from "./load-ids.ts";
import { type LogEvent, parseEvent } from "./parse-event.ts";

/** An event of a load that its source does not store yet, with its 1-based line. */
export interface NewEvent {
  event: LogEvent;
  line: number;
}

export interface LoadLinesOptions {
  source: string;
  /** the load's clock, for events without a timestamp */
  nowMicros: bigint;
  /** events whose ids are checked together (`LoadIds.keep`) before `write` gets the new ones */
  batch: number;
  /** events between two `onProgress` calls */
  progressEvery: number;
  ids: LoadIds;
  onProgress?: LoadOptions["onProgress"];
}

/**
 * The read side of a `qes load` that every backend writing one event at a time shares: each line
 * parsed by core (`parseEvent`; blank lines skipped, a malformed one throws its line's
 * `invalid_event`), the events checked against the source's and the load's own ids in batches
 * (`LoadIds`), and `write` called with the new ones of each batch, in input order. The writer
 * widens and stores them. Returns the events read (stored or left out) and their bytes.
 */
export async function loadLines(
  input: AsyncIterable<string>,
  opts: LoadLinesOptions,
  write: (events: NewEvent[]) => Promise<void>,
): Promise<{ events: number; bytes: number }> {
  let events = 0;
  let bytes = 0;
  let lineNumber = 0;
  let checked: NewEvent[] = [];
  const writeChecked = async () => {
    const keep = await opts.ids.keep(checked.map((c) => c.event.id));
    const kept = keep === undefined ? checked : checked.filter((_, i) => keep[i]);
    checked = [];
    if (kept.length > 0) await write(kept);
  };
  for await (const line of input) {
    lineNumber++;
    bytes += Buffer.byteLength(line) + 1;
    const event = parseEvent(line, lineNumber, opts.nowMicros, opts.source);
    if (event === null) continue;
    checked.push({ event, line: lineNumber });
    if (checked.length >= opts.batch) await writeChecked();
    events++;
    if (events % opts.progressEvery === 0) opts.onProgress?.({ events, bytes });
  }
  await writeChecked();
  return { events, bytes };
}

/** A load's summary, from its start (`performance.now()`) to now. */
export function loadSummary(
  source: string,
  events: number,
  duplicates: number,
  startedMs: number,
): LoadSummary {
  const seconds = (performance.now() - startedMs) / 1000;
  return { source, events, duplicates, seconds, eventsPerSecond: seconds > 0 ? events / seconds : events };
}
