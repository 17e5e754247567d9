import { bytesText } from '../report/format.js';
import { UsageError } from './usageError.js';

const BINARY: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kib: 1024,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
  t: 1024 ** 4,
  tib: 1024 ** 4,
};
const DECIMAL: Record<string, number> = { kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12 };

/**
 * Parses a size: plain bytes (`32768`) or a number with a unit. K/M/G/T and KiB/MiB/GiB/TiB are
 * powers of 1024 (as nccl-tests reads `-b 8 -e 8G`); KB/MB/GB/TB are powers of 1000.
 */
export function parseBytes(text: string, option: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = m ? m[2].toLowerCase() : '';
  const scale = m ? (BINARY[unit] ?? DECIMAL[unit]) : undefined;
  if (!m || scale === undefined) {
    throw new UsageError(
      `${option}: '${text}' is not a size; use bytes (32768) or a number with a unit: ` +
        'K, M, G, T (×1024), KiB, MiB, GiB, TiB, or KB, MB, GB, TB (×1000), in either case',
    );
  }
  const product = Number(m[1]) * scale;
  const bytes = Math.round(product);
  // 1.5GiB is a whole number of bytes; 1.5 is not one (a size is a count of bytes, as nccl-tests takes it). The
  // product only needs to be whole up to rounding: 4.1 × 1e6 is 4099999.9999999995 in floating point.
  if (Math.abs(product - bytes) > 1e-6 * Math.max(1, bytes))
    throw new UsageError(
      `${option}: '${text}' is not a whole number of bytes; ` +
        'give a whole count (1.5 KiB = 1536 is fine, 1.5 bytes is not)',
    );
  if (bytes <= 0) throw new UsageError(`${option}: must be at least 1 byte, got '${text}'`);
  return bytes;
}

/** Formats bytes with a binary unit, as nccl-tests users read them (the reports' formatter). */
export const formatBytes = bytesText;

/** Formats seconds with a unit that keeps 3–4 significant digits (ns below a microsecond, so 9.4 ns is not 0.0 µs). */
export function formatSeconds(s: number): string {
  if (s >= 1) return `${s.toFixed(3)} s`;
  if (s >= 1e-3) return `${(s * 1e3).toFixed(2)} ms`;
  if (s >= 1e-6 || s <= 0) return `${(s * 1e6).toFixed(1)} µs`;
  return `${(s * 1e9).toFixed(1)} ns`;
}

/** Parses a whole number of at least `min`; anything else is refused with the same message, naming the range. */
export function parseIntAtLeast(text: string, option: string, min: number): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < min)
    throw new UsageError(`${option}: expected a whole number ≥ ${min}, got '${text}'`);
  return Number(text);
}

export function parsePositiveInt(text: string, option: string): number {
  return parseIntAtLeast(text, option, 1);
}
