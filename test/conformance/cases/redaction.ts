import type { ConformanceCase } from "../support/case.ts";
import { GLUED_FORMS } from "../support/events.ts";
import { type Row, redact, type Wire } from "../support/oracle.ts";
import { logsAll } from "./logs-all.ts";
import { usageCounts } from "./usage-api-counts.ts";

// PII redaction (SPEC §4.1 header, DESIGN.md §7): issue 5's part of the server. The rows of a
// redacting request are the unredacted oracle rows with every IP address in a string replaced.

const REDACT = { "QES-ENDPOINT-REDACT-PII": "true" };
const redactRows = (rows: Row[]): Row[] => rows.map((r) => redact(r) as Row);

// Glued forms: the oracle's own reading (the longest address in a run of address characters)
// knows no prose, so these texts take the redaction GLUED_FORMS gives them.
const GLUED = new Map(GLUED_FORMS);
const redactGlued = (v: Wire): Wire =>
  typeof v === "string" && GLUED.has(v)
    ? (GLUED.get(v) as string)
    : Array.isArray(v)
      ? v.map(redactGlued)
      : v !== null && typeof v === "object"
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, redactGlued(x)]))
        : redact(v);
const TAGS =
  "from edge_logs as t cross join unnest(t.metadata) as m cross join unnest(m.tags) as g with offset as o";
/** what is left of a text once its colons and percent signs are `~`: no address for the pass over the result to find */
const tilde = (text: string) => text.replaceAll(":", "~").replaceAll("%", "~");

export const redactionCases: ConformanceCase[] = [
  {
    name: "redaction: IPv4 and IPv6 in every textual form, at any depth",
    rule: "DESIGN §7: QES-ENDPOINT-REDACT-PII: true",
    endpoint: "logs.all",
    params: { project: "pii" },
    headers: REDACT,
    oracle: (events) => ({ rows: redactRows(logsAll(events, { project: "pii" })) }),
  },
  {
    name: "redaction: off without the header",
    rule: "SPEC §8: redaction default disabled",
    endpoint: "logs.all",
    params: { project: "pii" },
    oracle: (events) => ({ rows: logsAll(events, { project: "pii" }) }),
  },
  {
    name: "redaction: the header must say true",
    rule: "SPEC §4.1: `true` switches redaction on",
    endpoint: "logs.all",
    params: { project: "pii" },
    headers: { "QES-ENDPOINT-REDACT-PII": "false" },
    oracle: (events) => ({ rows: logsAll(events, { project: "pii" }) }),
  },
  {
    name: "redaction: the SVC- alias",
    rule: "SPEC §4.1 SVC-ENDPOINT-REDACT-PII; DESIGN §7 aliases",
    endpoint: "logs.all",
    params: { project: "pii" },
    headers: { "SVC-ENDPOINT-REDACT-PII": "true" },
    oracle: (events) => ({ rows: redactRows(logsAll(events, { project: "pii" })) }),
  },
  {
    name: "redaction: the LF- alias",
    rule: "DESIGN §7 aliases",
    endpoint: "logs.all",
    params: { project: "pii" },
    headers: { "LF-ENDPOINT-REDACT-PII": "true" },
    oracle: (events) => ({ rows: redactRows(logsAll(events, { project: "pii" })) }),
  },
  {
    name: "redaction: generated events of every shape",
    rule: "DESIGN §7",
    endpoint: "logs.all",
    params: { project: "alpha" },
    headers: REDACT,
    oracle: (events) => ({ rows: redactRows(logsAll(events, { project: "alpha" })) }),
  },
  {
    name: "redaction: consumer SQL results over several sources",
    rule: "DESIGN §7: any string value",
    endpoint: "logs.all",
    params: { project: "alpha" },
    headers: REDACT,
    sql: `select id, event_message, metadata from postgres_logs
union all select id, event_message, metadata from pgbouncer_logs
union all select id, event_message, metadata from storage_logs`,
    ordered: false,
    oracle: (events) => ({
      rows: redactRows(
        (["postgres_logs", "pgbouncer_logs", "storage_logs"] as const).flatMap((cte) =>
          events.cte(cte, { project: "alpha" }).map((e) => ({
            id: e.id,
            event_message: e.event_message,
            metadata: events.wireMetadata(e),
          })),
        ),
      ),
    }),
  },
  {
    name: "redaction: addresses glued to words on both sides, whole, and prose kept",
    rule: "DESIGN §7; address-pattern.ts: compressed IPv6 glued on both sides",
    endpoint: "logs.all",
    params: { project: "pii-glued" },
    headers: REDACT,
    oracle: (events) => ({
      rows: logsAll(events, { project: "pii-glued" }).map((r) => redactGlued(r) as Row),
    }),
  },
  {
    name: "redaction: glued addresses read by consumer SQL, whole or not at all",
    rule: "DESIGN §7, §11: redacted inside the engine before consumer SQL sees them",
    endpoint: "logs.all",
    params: { project: "pii-glued" },
    headers: REDACT,
    sql: `select o, g ${TAGS} order by o`,
    oracle: () => ({ rows: GLUED_FORMS.map(([, redacted], o) => ({ o, g: redacted })) }),
  },
  {
    name: "redaction: glued addresses as the engine alone redacts them",
    rule: "DESIGN §11: every engine replaces what the pass over the result would",
    endpoint: "logs.all",
    params: { project: "pii-glued" },
    headers: REDACT,
    sql: `select o, replace(replace(g, ':', '~'), '%', '~') as g ${TAGS} order by o`,
    oracle: () => ({ rows: GLUED_FORMS.map(([, redacted], o) => ({ o, g: tilde(redacted) })) }),
  },
  {
    name: "redaction: a cached endpoint never serves unredacted bytes to a redacting request",
    rule: "DESIGN §7: the redaction flag is part of the cache key",
    endpoint: "usage.api-counts",
    params: { interval: "daily", project: "usage1" },
    headers: REDACT,
    oracle: (events) => ({ rows: usageCounts(events, "daily", "usage1") }),
  },
  {
    name: "redaction: numbers and keys stay",
    rule: "DESIGN §7: keys and numbers are untouched",
    endpoint: "logs.all",
    params: { project: "pii" },
    headers: REDACT,
    sql: "select t.id, m.port, m.x_ip_count, m.note from edge_logs as t cross join unnest(t.metadata) as m where m.port is not null",
    oracle: () => ({ rows: [{ id: "p-none", port: 5432, x_ip_count: 2, note: "numbers and keys stay" }] }),
  },
];
