/**
 * A JSON parser for the oracle that keeps integers exact: an integral number beyond ±2^53 becomes
 * a bigint, so an oracle can tell `9007199254740993` from `9007199254740992` (JSON.parse cannot).
 * Written for the test's own events only: strict enough for them, not a general validator.
 */
export type ExactJson =
  | null
  | boolean
  | number
  | bigint
  | string
  | ExactJson[]
  | { [key: string]: ExactJson };

export function parseExactJson(text: string): ExactJson {
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\r\n".includes(text[i]!)) i++;
  };
  const value = (): ExactJson => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const obj: { [key: string]: ExactJson } = Object.create(null);
      ws();
      if (text[i] === "}") {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        const key = string();
        ws();
        if (text[i++] !== ":") throw new Error(`expected : at ${i}`);
        // a key named __proto__ is data (Object.create(null) keeps it so)
        obj[key] = value();
        ws();
        const sep = text[i++];
        if (sep === "}") return obj;
        if (sep !== ",") throw new Error(`expected , or } at ${i}`);
      }
    }
    if (c === "[") {
      i++;
      const arr: ExactJson[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value());
        ws();
        const sep = text[i++];
        if (sep === "]") return arr;
        if (sep !== ",") throw new Error(`expected , or ] at ${i}`);
      }
    }
    if (c === '"') return string();
    if (text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    if (text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m) throw new Error(`unexpected ${c} at ${i}`);
    i += m[0].length;
    if (m[1] === undefined && m[2] === undefined) {
      const n = Number(m[0]);
      return Number.isSafeInteger(n) ? n : BigInt(m[0]);
    }
    // a float: boxed so the oracle can tell 1.0 (FLOAT64) from 1 (INT64)
    return new FloatNumber(Number(m[0])) as unknown as number;
  };
  const string = (): string => {
    if (text[i] !== '"') throw new Error(`expected string at ${i}`);
    const start = i;
    i++;
    while (text[i] !== '"') {
      if (text[i] === "\\") i++;
      i++;
    }
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const v = value();
  ws();
  if (i !== text.length) throw new Error(`trailing text at ${i}`);
  return v;
}

/** a JSON number written with a fraction or exponent: FLOAT64 even when its value is integral */
export class FloatNumber {
  constructor(readonly value: number) {}
}

export function isFloat(v: unknown): v is FloatNumber {
  return v instanceof FloatNumber;
}

export function isRecord(v: unknown): v is { [key: string]: ExactJson } {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof FloatNumber);
}
