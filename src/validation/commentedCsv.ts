/**
 * The layout of the published-table data files in test/validation/: `#` comment lines (the source, first
 * `# source:`), then a header line, then numeric rows.
 */
export interface CommentedCsv {
  /** The comment lines, without the leading `# `. */
  source: string[];
  rows: number[][];
  /** Index of a header column; throws naming the file's kind when it is missing. */
  col(name: string): number;
}

export function parseCommentedCsv(text: string, what: string): CommentedCsv {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  const source = lines.filter((l) => l.startsWith('#')).map((l) => l.replace(/^#\s*/, ''));
  const data = lines.filter((l) => !l.startsWith('#'));
  const header = data[0].split(',').map((s) => s.trim());
  return {
    source,
    rows: data.slice(1).map((line) => line.split(',').map(Number)),
    col(name: string): number {
      const i = header.indexOf(name);
      if (i < 0) throw new Error(`${what}: no column ${name}`);
      return i;
    },
  };
}

/** The model and split columns both published GPT tables share. */
export interface PublishedGptShape {
  paramsB: number;
  heads: number;
  hidden: number;
  layers: number;
  tp: number;
  pp: number;
  gpus: number;
}

/** Reads the shared columns (params_b, heads, hidden, layers, tp, pp, gpus) of one row. */
export function gptShapeOf(t: CommentedCsv, v: number[]): PublishedGptShape {
  return {
    paramsB: v[t.col('params_b')],
    heads: v[t.col('heads')],
    hidden: v[t.col('hidden')],
    layers: v[t.col('layers')],
    tp: v[t.col('tp')],
    pp: v[t.col('pp')],
    gpus: v[t.col('gpus')],
  };
}
