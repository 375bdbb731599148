/** Medians, timing loops and number formatting shared by the benchmarks. */

export function median(xs: number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))]!;
}

/**
 * Times two functions alternately (A, B, A, B, …) after warm-up runs, so drift of the machine
 * (page cache, CPU frequency, a neighbour's load) falls on both alike. Returns milliseconds.
 */
export async function timePair(
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
  opts: { runs: number; warmup?: number },
): Promise<{ a: number[]; b: number[] }> {
  for (let i = 0; i < (opts.warmup ?? 2); i++) {
    await a();
    await b();
  }
  const out = { a: [] as number[], b: [] as number[] };
  for (let i = 0; i < opts.runs; i++) {
    const first = i % 2 === 0 ? a : b;
    const second = i % 2 === 0 ? b : a;
    let t = performance.now();
    await first();
    const t1 = performance.now() - t;
    t = performance.now();
    await second();
    const t2 = performance.now() - t;
    if (i % 2 === 0) {
      out.a.push(t1);
      out.b.push(t2);
    } else {
      out.b.push(t1);
      out.a.push(t2);
    }
  }
  return out;
}

/**
 * timePair for any number of functions: each round runs all of them, starting one later each
 * round (A B C, B C A, C A B, …), so no function is always first after the pause. Milliseconds,
 * one list per function.
 */
export async function timeRotating(
  fns: (() => Promise<unknown>)[],
  opts: { runs: number; warmup?: number },
): Promise<number[][]> {
  for (let i = 0; i < (opts.warmup ?? 2); i++) for (const f of fns) await f();
  const out = fns.map(() => [] as number[]);
  for (let round = 0; round < opts.runs; round++) {
    for (let k = 0; k < fns.length; k++) {
      const j = (round + k) % fns.length;
      const t = performance.now();
      await fns[j]!();
      out[j]!.push(performance.now() - t);
    }
  }
  return out;
}

export async function timeRuns(
  fn: () => Promise<unknown> | unknown,
  runs: number,
  warmup = 2,
): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    samples.push(performance.now() - t);
  }
  return samples;
}

export function ms(x: number): string {
  if (!Number.isFinite(x)) return "n/a";
  if (x < 1) return `${x.toFixed(3)} ms`;
  if (x < 10) return `${x.toFixed(2)} ms`;
  if (x < 1000) return `${x.toFixed(1)} ms`;
  return `${(x / 1000).toFixed(2)} s`;
}

export function ratio(x: number, baseline: number): string {
  return Number.isFinite(x) && Number.isFinite(baseline) && baseline > 0
    ? `${(x / baseline).toFixed(2)}×`
    : "n/a";
}

export function count(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}
