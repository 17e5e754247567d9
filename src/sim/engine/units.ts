/** Unit conversions at the edges of the simulator. Inside, time is integer nanoseconds and sizes are bytes. */

export const NS_PER_US = 1e3;
export const NS_PER_MS = 1e6;
export const NS_PER_S = 1e9;

export const KiB = 1024;
export const MiB = 1024 * KiB;
export const GiB = 1024 * MiB;

/** 1 GB/s is exactly 1 byte per nanosecond, so link capacities in GB/s are used as bytes/ns directly. */
export function gbpsToBytesPerNs(bandwidthGBps: number): number {
  return bandwidthGBps;
}

/** Converts a network line rate in gigabits per second to GB/s (bytes). */
export function gbitToGBps(gbit: number): number {
  return gbit / 8;
}

export function nsToS(ns: number): number {
  return ns / NS_PER_S;
}

export function sToNs(s: number): number {
  return Math.round(s * NS_PER_S);
}

export function usToNs(us: number): number {
  return Math.round(us * NS_PER_US);
}
