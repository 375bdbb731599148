import { isQesError } from "@qes/core";

/** A wrong command line: printed with the usage, exit code 2. */
export class UsageError extends Error {}

/** A failure the person can act on from its message alone: printed without a stack, exit code 1. */
export class CliError extends Error {}

/** what the person at the terminal reads for an error: the message, located when it can be */
export function describeError(e: unknown): string {
  if (isQesError(e)) {
    if (e.code === "backend_unavailable")
      return `${e.message}\n(is the database running? see scripts/ensure-services.sh)`;
    return e.message;
  }
  if (e instanceof UsageError || e instanceof CliError) return e.message;
  if (e instanceof Error) return e.stack ?? e.message;
  return String(e);
}

/**
 * Text a server sent, for the terminal: control characters (C0, DEL, C1) as `\uXXXX`, so that no
 * byte of it moves the cursor, recolours or retitles the terminal, and at most `max` characters.
 */
export function serverText(text: string, max = 300): string {
  const cut = text.length > max ? `${text.slice(0, max)}… (${count(text.length)} characters)` : text;
  let shown = "";
  for (const c of cut) {
    const code = c.charCodeAt(0);
    shown += code < 0x20 || (code >= 0x7f && code <= 0x9f) ? `\\u${code.toString(16).padStart(4, "0")}` : c;
  }
  return shown;
}

/** 1234567 → "1,234,567" */
export function count(n: number): string {
  return n.toLocaleString("en-US");
}

export function seconds(s: number): string {
  return s < 10 ? s.toFixed(2) : s.toFixed(1);
}

/**
 * A progress line for long work: nothing during the first interval, then a line that rewrites
 * itself on a terminal (every second) or a plain line every five seconds otherwise.
 */
export function progressPrinter(stream: NodeJS.WriteStream = process.stderr, everyMs = 1000) {
  let last = Date.now();
  let shown = false;
  const tty = stream.isTTY === true;
  return {
    update(text: string): void {
      const now = Date.now();
      if (now - last < (tty ? everyMs : everyMs * 5)) return;
      last = now;
      shown = true;
      stream.write(tty ? `\r\x1b[K${text}` : `${text}\n`);
    },
    done(): void {
      if (shown && tty) stream.write("\r\x1b[K");
      shown = false;
    },
  };
}
