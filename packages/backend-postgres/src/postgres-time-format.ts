import { QesError } from "@qes/core";

/** BigQuery format elements → PostgreSQL to_char / to_timestamp patterns. */
const ELEMENTS: Record<string, string> = {
  Y: "YYYY",
  m: "MM",
  d: "DD",
  H: "HH24",
  M: "MI",
  S: "SS",
  y: "YY",
  j: "DDD",
  b: "Mon",
  B: "FMMonth",
  a: "Dy",
  A: "FMDay",
  I: "HH12",
  p: "AM",
  e: "FMDD",
  F: "YYYY-MM-DD",
  T: "HH24:MI:SS",
  D: "MM/DD/YY",
  R: "HH24:MI",
  z: "+0000",
  Z: "UTC",
  "%": "%",
};

export function translateTimeFormat(format: string): string {
  let out = "";
  let literal = "";
  const flush = () => {
    if (literal) out += `"${literal.replace(/"/g, '\\"')}"`;
    literal = "";
  };
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== "%") {
      literal += c;
      continue;
    }
    const next = format[i + 1];
    if (next === "E") {
      const spec = format.slice(i + 2, i + 4);
      flush();
      if (spec === "*S" || spec === "6S") out += "SS.US";
      else if (spec === "3S") out += "SS.MS";
      else throw new QesError("sql_invalid", `Format element %E${spec} is not supported.`);
      i += 3;
      continue;
    }
    const element = next === undefined ? undefined : ELEMENTS[next];
    if (element === undefined)
      throw new QesError("sql_invalid", `Format element %${next ?? ""} is not supported.`);
    if (next === "%" || next === "z" || next === "Z") literal += element;
    else {
      flush();
      out += element;
    }
    i++;
  }
  flush();
  return out;
}
