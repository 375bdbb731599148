// Entry of an ingest worker thread. Worker threads do not inherit the TypeScript loader of the
// process that starts them, so the worker registers tsx itself, then runs the TypeScript entry.
import { register } from "tsx/esm/api";

register();
await import("./ingest-worker.ts");
