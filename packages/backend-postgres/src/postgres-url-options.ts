/**
 * A connection string and session options for pg with `ours` in force. pg lets an `options`
 * parameter of the URL replace the pool's `options` whole (an operator's `-c search_path=…`, a
 * hosted server's `endpoint=…`): the URL's go first and ours after them, and PostgreSQL takes the
 * last of a setting given twice.
 */
export function withSessionOptions(url: string, ours: string): { connectionString: string; options: string } {
  const parsed = new URL(url);
  const fromUrl = parsed.searchParams.get("options");
  parsed.searchParams.delete("options");
  return { connectionString: parsed.toString(), options: [fromUrl, ours].filter(Boolean).join(" ") };
}
