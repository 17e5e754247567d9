import { ScenarioError } from '../errors.js';

/** Reading the fields of a Hugging Face config.json (hfConfig.ts, hfMoeConfig.ts), each error naming the field. */

/** A parsed Hugging Face config.json. */
export type Json = Record<string, unknown>;

export function fail(sourcePath: string, message: string): never {
  throw new ScenarioError(sourcePath, message);
}

/** First of `keys` present (not null/undefined) in `cfg`, as a positive integer. */
export function intField(cfg: Json, keys: string[], sourcePath: string, fallback?: number): number {
  for (const key of keys) {
    const v = cfg[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
      fail(sourcePath, `field '${key}' is ${JSON.stringify(v)}; expected a positive integer`);
    }
    return v;
  }
  if (fallback !== undefined) return fallback;
  const alt =
    keys.length > 1
      ? ` (or ${keys
          .slice(1)
          .map((k) => `'${k}'`)
          .join(', ')})`
      : '';
  return fail(sourcePath, `missing field '${keys[0]}'${alt}; expected a positive integer`);
}
