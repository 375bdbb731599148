import { parentPort } from "node:worker_threads";
import { type IngestPreparerModule, isQesError, schemaCoversEvent } from "@qes/core/events";
import type { PrepareReply, PrepareRequest } from "./ingest-workers.ts";
import { requestEvents } from "./request-events.ts";

/**
 * Entry of an ingest worker (ingest-workers.ts): a request's body in, its events checked as the
 * route checks them and, when the source's schema covers every one, their rows encoded by the
 * backend's preparer; only ids and rows go back.
 */
const preparers = new Map<string, Promise<IngestPreparerModule>>();

function preparer(url: string): Promise<IngestPreparerModule> {
  let module = preparers.get(url);
  if (module === undefined) {
    module = import(url) as Promise<IngestPreparerModule>;
    preparers.set(url, module);
  }
  return module;
}

async function prepare(request: PrepareRequest): Promise<{ reply: PrepareReply; transfer: ArrayBuffer[] }> {
  const { id, schema } = request;
  try {
    const { events } = requestEvents(
      request.body,
      request.format,
      request.source,
      request.nowMicros,
      request.maxEvents,
    );
    for (const event of events)
      if (!schemaCoversEvent(schema.fields, event.body))
        return { reply: { id, kind: "uncovered" }, transfer: [] };
    const { rows, transfer } = (await preparer(request.preparer)).prepareIngestRows(schema, events);
    return {
      reply: {
        id,
        kind: "prepared",
        fields: JSON.stringify(schema.fields),
        ids: events.map((e) => e.id),
        rows,
      },
      transfer: transfer ?? [],
    };
  } catch (e) {
    if (!isQesError(e)) throw e;
    const { code, message, param, line, retryAfterSeconds } = e;
    return {
      reply: { id, kind: "refused", code, message, details: { param, line, retryAfterSeconds } },
      transfer: [],
    };
  }
}

parentPort!.on("message", (request: PrepareRequest) => {
  prepare(request).then(
    ({ reply, transfer }) => parentPort!.postMessage(reply, transfer),
    (e: unknown) =>
      parentPort!.postMessage({
        id: request.id,
        kind: "failed",
        message: e instanceof Error ? e.message : String(e),
      }),
  );
});

// loaded (the TypeScript loader, core): requests from now on are timed (ingest-workers.ts)
parentPort!.postMessage({ kind: "ready" });
