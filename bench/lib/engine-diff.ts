import type { Backend, WireValue } from "@qes/core";
import { BACKENDS } from "../../test/support/backends.ts";
import { runSql } from "../../test/support/run-sql.ts";

/**
 * One generated query run on every backend and the classes of disagreement the fuzz scripts
 * (bench/expr-fuzz.ts, bench/agg-fuzz.ts) count: a 5xx-class failure first, then all refusing,
 * one refusing where another answers, different rows.
 */
export type EngineResult = { ok: true; v: string } | { ok: false; code: string; msg: string };
export type DiffClass = "agree" | "internal" | "allError" | "errorVsAnswer" | "valueDiff";

/** Floats compared at 12 significant digits, at any depth of a row. */
export function normalised(v: unknown): unknown {
  if (typeof v === "number" && !Number.isInteger(v)) return Number(v.toPrecision(12));
  if (Array.isArray(v)) return v.map(normalised);
  if (v && typeof v === "object")
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalised(x)]));
  return v;
}

/** `sql` on each backend, its rows as text (`asText`), or the error it raised. */
export async function runEverywhere(
  backends: readonly Backend[],
  sql: string,
  asText: (rows: Record<string, WireValue>[]) => string,
): Promise<EngineResult[]> {
  const results: EngineResult[] = [];
  for (const backend of backends) {
    try {
      results.push({ ok: true, v: asText(await runSql(backend, sql)) });
    } catch (err) {
      const e = err as { code?: string; message?: string };
      results.push({ ok: false, code: e?.code ?? "THROWN", msg: String(e?.message ?? err).slice(0, 200) });
    }
  }
  return results;
}

export function classify(results: readonly EngineResult[]): DiffClass {
  const internal = results.some(
    (r) => !r.ok && (r.code === "internal" || r.code === "THROWN" || r.code === "backend_unavailable"),
  );
  if (internal) return "internal";
  const oks = results.filter((r): r is { ok: true; v: string } => r.ok);
  if (oks.length === 0) return "allError";
  if (oks.length < results.length) return "errorVsAnswer";
  return new Set(oks.map((o) => o.v)).size > 1 ? "valueDiff" : "agree";
}

/** One line per backend, for a report of a disagreement. */
export function summary(names: readonly string[], results: readonly EngineResult[]): string {
  return results.map((r, j) => `${names[j]}: ${r.ok ? r.v : `ERR ${r.code} ${r.msg}`}`).join("\n   ");
}

/** Every backend of test/support/backends.ts on a fresh store, with its name, and how to close them. */
export async function openEngines(): Promise<{
  backends: Backend[];
  names: string[];
  dispose(): Promise<void>;
}> {
  const handles = await Promise.all(BACKENDS.map((b) => b.create()));
  return {
    backends: handles.map((h) => h.backend),
    names: BACKENDS.map((b) => b.name),
    async dispose() {
      for (const h of handles) await h.dispose();
    },
  };
}

/** The counters a fuzz run prints: queries run, and each class of `classify` */
export function diffCounters(): Record<"run" | DiffClass, number> & Record<string, number> {
  return { run: 0, agree: 0, allError: 0, valueDiff: 0, errorVsAnswer: 0, internal: 0 };
}
