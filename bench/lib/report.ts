/** A benchmark's results as a section of docs/benchmarks.md. */
export interface Section {
  title: string;
  /** what is measured and against which baseline */
  intro: string;
  header: string[];
  rows: string[][];
  /** analysis, misses and caveats, one paragraph each */
  notes: string[];
}

export function sectionMarkdown(s: Section): string {
  const lines = [`## ${s.title}`, "", s.intro, ""];
  if (s.rows.length > 0) {
    lines.push(`| ${s.header.join(" | ")} |`, `|${s.header.map(() => "---").join("|")}|`);
    for (const r of s.rows) lines.push(`| ${r.join(" | ")} |`);
    lines.push("");
  }
  for (const n of s.notes) lines.push(n, "");
  return lines.join("\n");
}

/** prints a section to stdout (for running one benchmark on its own) */
export function printSection(s: Section): void {
  process.stdout.write(`${sectionMarkdown(s)}\n`);
}

/** true when this module is the process's entry point */
export function isMain(metaUrl: string): boolean {
  return process.argv[1] !== undefined && metaUrl === new URL(`file://${process.argv[1]}`).href;
}
