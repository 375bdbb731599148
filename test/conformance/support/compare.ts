import { expect } from "vitest";
import type { Row, Wire } from "./oracle.ts";

/**
 * Compares result rows with the oracle's. FLOAT64 values that are not whole numbers match within
 * a relative 1e-9 (two engines may add floats in different orders); everything else exactly.
 */
export function expectRows(actual: Row[], expected: Row[], ordered: boolean): void {
  const a = ordered ? actual : [...actual].sort(byCanonical);
  const e = ordered ? expected : [...expected].sort(byCanonical);
  expect(a.length, "row count").toBe(e.length);
  expect(approximate(a, e)).toEqual(e);
}

/** `actual` with each non-integral number replaced by the expected one when they are close */
function approximate(actual: Wire, expected: Wire): Wire {
  if (typeof actual === "number" && typeof expected === "number") {
    if (Number.isInteger(actual) && Number.isInteger(expected)) return actual;
    const scale = Math.max(Math.abs(actual), Math.abs(expected), 1e-300);
    return Math.abs(actual - expected) / scale <= 1e-9 ? expected : actual;
  }
  if (Array.isArray(actual) && Array.isArray(expected)) {
    return actual.map((v, i) => (i < expected.length ? approximate(v, expected[i]!) : v));
  }
  if (isObject(actual) && isObject(expected)) {
    const out: { [key: string]: Wire } = {};
    for (const [k, v] of Object.entries(actual)) out[k] = k in expected ? approximate(v, expected[k]!) : v;
    return out;
  }
  return actual;
}

function isObject(v: Wire): v is { [key: string]: Wire } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function canonical(v: Wire): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (isObject(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k]!)}`)
      .join(",")}}`;
  }
  // round floats so near-equal values sort alike
  if (typeof v === "number" && !Number.isInteger(v)) return v.toPrecision(12);
  return JSON.stringify(v);
}

function byCanonical(x: Row, y: Row): number {
  const a = canonical(x);
  const b = canonical(y);
  return a < b ? -1 : a > b ? 1 : 0;
}
