import { RE2JS } from "re2js";

/**
 * Why RE2 itself refuses `pattern` (`[b-a]`, `[[:foo:]]`), or undefined when it compiles. The
 * portable-subset check reads the pattern's shape; this one is RE2's own parser (re2js, a port of
 * it), so a pattern that passes both runs on every engine instead of failing inside one.
 */
export function re2Problem(pattern: string): string | undefined {
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    return message.replace(/^error parsing regexp: /, "");
  }
}
