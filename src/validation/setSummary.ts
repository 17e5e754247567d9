import { mape, meanSignedErrorPct } from './vtrain.js';

/** What `--json` prints for a published set: its source, timing, MAPE, bias and every outcome. */
export function setSummary<T extends { errorPct: number }>(
  source: string[],
  startedMs: number,
  outcomes: T[],
  pair: (o: T) => { predicted: number; measured: number },
) {
  return {
    source,
    rows: outcomes.length,
    wallS: (Date.now() - startedMs) / 1e3,
    mapePct: mape(outcomes.map(pair)),
    meanSignedErrorPct: meanSignedErrorPct(outcomes),
    outcomes,
  };
}
