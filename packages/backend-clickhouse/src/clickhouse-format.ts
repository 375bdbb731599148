import { type FormatSpec, printfHead, type SqlEmitter, type SqlType } from "@qes/core";

/** One FORMAT specifier with ClickHouse's printf; values other than numbers print as their text. */
export function formatSpec(e: SqlEmitter, x: string, type: SqlType, s: FormatSpec): string {
  // the format is written as a literal
  const head = printfHead(s);
  const printf = (format: string, arg: string) => `printf(${e.stringLiteral(format)}, ${arg})`;
  switch (s.conversion) {
    case "d":
    case "i":
    case "x":
    case "X":
    case "o":
      return printf(`${head}${s.conversion === "i" ? "d" : s.conversion}`, `toInt64(${x})`);
    case "f":
    case "e":
    case "E":
    case "g":
    case "G":
      return printf(`${s.precision === undefined ? `${head}.6` : head}${s.conversion}`, `toFloat64(${x})`);
    default: {
      // width and precision count characters, not bytes (printf's): padded and cut in UTF-8
      let text = e.cast(x, type, "STRING");
      if (s.precision !== undefined) text = `substringUTF8(${text}, 1, ${s.precision})`;
      if (s.width === undefined) return text;
      const pad = s.flags.includes("-") ? "rightPadUTF8" : "leftPadUTF8";
      return `${pad}(${text}, greatest(${s.width}, lengthUTF8(${text})), ' ')`;
    }
  }
}
