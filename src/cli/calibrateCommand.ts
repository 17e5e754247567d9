import { Option, type Command } from 'commander';
import cliProgress from 'cli-progress';
import { cpuClockFor, openBackend, BackendUnavailableError } from '../calibrate/backends.js';
import type { BenchItem, CpuClockMode } from '../calibrate/types.js';
import { calibrate } from '../calibrate/calibrateRun.js';
import { LogError } from '../calibrate/measurementLog.js';
import { NativeUnavailableError } from '../calibrate/native.js';
import { ProfileError, readProfile, type Profile } from '../calibrate/profile.js';
import { withProfile } from '../calibrate/applyProfile.js';
import type { CommSetup } from '../sim/setup.js';
import type { ClusterSpec } from '../sim/hardware/types.js';
import { FitError } from '../calibrate/stats.js';
import { VERSION } from '../version.js';
import { processOutput, type Output } from './output.js';
import { table } from '../report/textTable.js';
import { formatSeconds, parsePositiveInt } from './units.js';
import { prepareOutputFile, sameFile } from './outputFile.js';
import { InterruptedError, UsageError } from './usageError.js';
import { PLAIN_PROGRESS_EVERY_MS } from '../report/progressLines.js';

// Without a terminal, a line at least this often while a group of measurements runs (the sweeps' interval).
export { PLAIN_PROGRESS_EVERY_MS };

/**
 * Progress on stderr: a bar when stderr is a terminal, otherwise one line per group of measurements and one at
 * least every `PLAIN_PROGRESS_EVERY_MS` within a long group.
 */
export interface Progress {
  update(done: number, total: number, label?: string, group?: string): void;
  stop(): void;
}

export function progressReporter(io: Output, what: string): Progress {
  if (io === processOutput && process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        format: `${what} {bar} {value}/{total} | ETA {eta_formatted} | {label}`,
        stream: process.stderr,
        hideCursor: true,
        clearOnComplete: true,
        etaBuffer: 20,
      },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      update(done, total, label = '') {
        if (!started) bar.start(total, done, { label });
        started = true;
        bar.update(done, { label });
      },
      stop: () => bar.stop(),
    };
  }
  let lastGroup = '';
  let lastLineAt = Date.now();
  return {
    update(done, total, label, group) {
      const now = Date.now();
      if (group && group !== lastGroup) io.err(`${what}: ${group} (${done}/${total} done)`);
      else if (now - lastLineAt >= PLAIN_PROGRESS_EVERY_MS)
        io.err(`${what}: ${done}/${total} done${label ? `, next ${label}` : ''}`);
      else return;
      lastLineAt = now;
      lastGroup = group ?? lastGroup;
    },
    stop: () => {},
  };
}

/** Library errors the user can act on become usage errors: a message, exit code 2, no stack trace. */
export function asUsageError(err: unknown): unknown {
  if (
    err instanceof NativeUnavailableError ||
    err instanceof BackendUnavailableError ||
    err instanceof LogError ||
    err instanceof ProfileError ||
    err instanceof FitError
  ) {
    return new UsageError(err.message);
  }
  return err;
}

/**
 * Under bin/clustersim.js (which sets CLUSTERSIM_WRAPPED), a second SIGINT this soon after the first is the same
 * Ctrl-C arriving twice, from the terminal to the process group and passed on by the wrapper a moment later; a
 * second press of the keys takes longer than this.
 */
export const REPEATED_SIGINT_MS = 150;

/** Aborts `controller` on the first Ctrl-C (the work in flight finishes); returns the remover. */
export function onInterrupt(
  io: Output,
  controller: AbortController,
  what: string,
  inFlight = 'the measurement in flight',
): () => void {
  const wrapped = process.env.CLUSTERSIM_WRAPPED === '1';
  let lastAt = 0;
  const handler = () => {
    const now = Date.now();
    const echo = wrapped && now - lastAt < REPEATED_SIGINT_MS;
    lastAt = now;
    if (echo) return;
    if (controller.signal.aborted) process.exit(130);
    io.err(`\n${what}: stopping after ${inFlight} (Ctrl-C again to quit at once)`);
    controller.abort();
  };
  process.on('SIGINT', handler);
  return () => process.off('SIGINT', handler);
}

/** What `--profile` did to a scenario: the file, what it replaced, and how to do the same to a variant of it. */
export interface AppliedProfile {
  file: string;
  applied: string[];
  /** The profile read, to apply to another scenario (an alternative) with `withProfile`. */
  profile: Profile;
}

/**
 * `simulate --profile`: the scenario with the profile's constants, saying on stderr what was replaced, and the
 * profile for the alternatives to be simulated with too.
 */
export function applyProfileOption<T extends { cluster: ClusterSpec; comm: CommSetup }>(
  scenario: T,
  path: string | undefined,
  io: Output,
): { scenario: T; profile?: AppliedProfile } {
  if (!path) return { scenario };
  try {
    const profile = readProfile(path);
    const gpuName = scenario.cluster.node.gpu.name;
    const preset = profile.device.gpuPreset;
    // Another preset's constants would run this GPU at that one's speed against this one's peak (an MFU past 100%).
    if (profile.backend === 'cuda' && preset !== undefined && preset !== gpuName) {
      throw new UsageError(
        `--profile ${path}: measured on ${profile.device.name} (${preset}), but the scenario's GPU is ${gpuName}; ` +
          `simulate that GPU (--set cluster.gpu=${preset}) or calibrate on the scenario's GPU`,
      );
    }
    if (profile.backend === 'cuda' && preset === undefined) {
      io.err(
        `clustersim: note: ${path} was measured on ${profile.device.name}, which matches no preset; ` +
          `its constants replace those of the scenario's ${gpuName}`,
      );
    }
    const { scenario: profiled, applied } = withProfile(scenario, profile, path);
    io.err(`clustersim: profile ${path}: ${applied.join('; ')}`);
    return { scenario: profiled, profile: { file: path, applied, profile } };
  } catch (err) {
    throw asUsageError(err);
  }
}

const UNRESOLVED_LATENCY_MARK = '*';

/** A fitted latency for the table; 0 is where the fit clamped a negative intercept (`fitAlphaBeta`), marked. */
function latencyText(latencyS: number): string {
  return latencyS === 0 ? `0 ${UNRESOLVED_LATENCY_MARK}` : formatSeconds(latencyS);
}

/** Which clock timed which measurements of a CPU calibration, as `cpuClockFor` chose them (backends.ts). */
export function cpuTimingText(threads: number, mode: CpuClockMode): string {
  const kinds: [BenchItem['kind'], string][] = [
    ['gemm', 'GEMMs'],
    ['launch', 'launches'],
    ['copy', 'copies'],
    ['collective', 'collectives'],
    ['program', 'compute with copies overlapping'],
  ];
  const clockOf = (kind: BenchItem['kind']) => cpuClockFor({ kind }, threads, mode);
  const wall = kinds.filter(([k]) => clockOf(k) === 'wall').map(([, name]) => name);
  const thread = kinds.filter(([k]) => clockOf(k) === 'thread').map(([, name]) => name);
  const list = (names: string[]) =>
    names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}` : names[0];
  if (thread.length === 0) return 'wall clock for everything';
  if (wall.length === 0)
    return (
      "each thread's CPU clock for everything (a collective: its slowest rank; " +
      'compute with copies overlapping: the critical path of its ops)'
    );
  return `wall clock for ${list(wall)} (they run on ${threads} threads); each thread's CPU clock for ${list(thread)}`;
}

/** The human-readable summary of a profile's fitted constants. */
export function formatProfile(p: Profile): string {
  const f = p.fit;
  const lines = [
    `${p.backend} calibration of ${p.device.count} ` +
      `× ${p.device.name}${p.device.gpuPreset ? ` (preset ${p.device.gpuPreset})` : ''}${p.quick ? ', quick' : ''}`,
    '  launch overhead     ' +
      `${formatSeconds(f.launchS)}${f.launchHostS !== undefined ? ` (host call ${formatSeconds(f.launchHostS)})` : ''}`,
    `  memory bandwidth    ${f.memoryBandwidthGBps.toFixed(1)} GB/s (read + write, streaming)`,
    ...(p.backend === 'cpu'
      ? [
          `  timing              ${cpuTimingText(p.machine.computeThreads ?? 1, p.machine.cpuClock ?? 'auto')}; ` +
            `fastest of the repeats; ${p.machine.computeThreads ?? 1} compute thread(s)`,
        ]
      : []),
    '',
    table(
      ['GEMM dtype', 'TFLOP/s (full waves)', 'tile', 'units', 'small-k half', 'median err %', 'worst err %'],
      Object.entries(f.gemm).map(([d, g]) => [
        d,
        g!.ceilingTflops.toPrecision(4),
        `${g!.tileM}×${g!.tileN}`,
        g!.units,
        g!.smallKHalf.toFixed(1),
        g!.residuals.medianPct.toFixed(1),
        g!.residuals.worstPct.toFixed(1),
      ]),
    ),
    '',
    table(
      ['transfer', 'latency', 'bandwidth GB/s', 'bus GB/s', 'sizes', 'median err %', 'worst err %'],
      [
        ...Object.entries(f.copies).map(([k, c]) => [
          `copy ${k}`,
          latencyText(c.latencyS),
          c.bandwidthGBps.toFixed(2),
          '-',
          `${c.points}`,
          c.residuals.medianPct.toFixed(1),
          c.residuals.worstPct.toFixed(1),
        ]),
        ...f.collectives.map((c) => [
          `${c.op} ×${c.ranks}`,
          latencyText(c.latencyS),
          c.bandwidthGBps.toFixed(2),
          c.busBandwidthGBps.toFixed(2),
          `${c.points}`,
          c.residuals.medianPct.toFixed(1),
          c.residuals.worstPct.toFixed(1),
        ]),
      ],
    ),
  ];
  const transfers = [...Object.values(f.copies), ...f.collectives];
  if (transfers.some((c) => c.latencyS === 0))
    lines.push(
      `  ${UNRESOLVED_LATENCY_MARK} the fitted latency came out below zero (too small for these sizes to resolve) ` +
        'and is taken as 0',
    );
  if (f.overlap)
    lines.push(
      '',
      `  overlap: compute ${formatSeconds(f.overlap.computeS)}, copies ${formatSeconds(f.overlap.copyS)}, ` +
        `both ${formatSeconds(f.overlap.bothS)} (${f.overlap.slowdownPct.toFixed(1)}% over the longer alone)`,
    );
  lines.push(
    '',
    `  noise: spread (max − min)/median of repeats: median ${p.noise.medianSpreadPct.toFixed(1)}%, ` +
      `p90 ${p.noise.p90SpreadPct.toFixed(1)}%, worst ${p.noise.worstSpreadPct.toFixed(1)}% over ` +
      `${p.measurements.length} measurements`,
  );
  return lines.join('\n');
}

interface CalibrateOptions {
  backend: 'auto' | 'cuda' | 'cpu';
  quick?: boolean;
  out: string;
  log?: string;
  resume?: boolean;
  threads?: string;
  wallClock?: boolean;
  json?: boolean;
}

/** profile.json → profile.measurements.jsonl (next to it). */
export function defaultLogPath(out: string): string {
  return `${out.replace(/\.json$/i, '')}.measurements.jsonl`;
}

export function registerCalibrate(program: Command, io: Output): void {
  program
    .command('calibrate')
    .description('measure this machine (GEMMs, copies, launches, collectives) and fit a profile for simulate --profile')
    .addOption(
      new Option('--backend <b>', 'cuda (GPUs through dlopen-ed CUDA libraries), cpu, or auto (cuda if usable)')
        .choices(['auto', 'cuda', 'cpu'])
        .default('auto'),
    )
    .option('--quick', 'a small plan (10–60 s on a CPU); enough for tests and a first look')
    .requiredOption('--out <profile.json>', 'where to write the profile')
    .option('--log <file.jsonl>', 'measurement log, appended as measurements are taken (default: next to --out)')
    .option('--resume', 'continue an interrupted calibration from its log')
    .option('--threads <n>', 'cpu backend: GEMM threads (default: all cores but one, left for the copy thread)')
    .option(
      '--wall-clock',
      "cpu backend: time single-threaded work by the wall clock too (default: its thread's CPU clock)",
    )
    .option('--json', 'print the profile as JSON instead of a summary')
    .addHelpText(
      'after',
      `
Measurements are appended to the log as they are taken; Ctrl-C stops after the one in flight and
--resume picks up where it stopped. The profile records the machine, every measurement summary and
the fitted constants (schema clustersim.profile, version 1).

Examples:
  $ clustersim calibrate --backend cpu --quick --out cpu-profile.json
  $ clustersim calibrate --backend cuda --out h200.json
  $ clustersim calibrate --backend cuda --out h200.json --resume`,
    )
    .action(async (opts: CalibrateOptions) => {
      const threads = opts.threads === undefined ? undefined : parsePositiveInt(opts.threads, '--threads');
      if (threads !== undefined && opts.backend === 'cuda')
        throw new UsageError('--threads applies to the cpu backend only');
      if (opts.wallClock && opts.backend === 'cuda')
        throw new UsageError(
          '--wall-clock applies to the cpu backend only (the cuda backend times kernels with CUDA events)',
        );
      const controller = new AbortController();
      const progress = progressReporter(io, 'calibrate');
      const removeHandler = onInterrupt(io, controller, 'calibrate');
      const logPath = opts.log ?? defaultLogPath(opts.out);
      if (sameFile(logPath, opts.out))
        throw new UsageError(
          `--out and --log are the same file (${opts.out}): the profile would overwrite the measurements it was ` +
            `fitted from; give the log another name (default: next to --out, ${defaultLogPath(opts.out)})`,
        );
      prepareOutputFile(opts.out, '--out');
      prepareOutputFile(logPath, '--log');
      try {
        const backend = openBackend(opts.backend, {
          threads,
          clock: opts.wallClock ? 'wall' : 'auto',
          warn: (s) => io.err(`clustersim: ${s}`),
        });
        io.err(`calibrate: ${backend.kind} backend; log ${logPath}`);
        const r = await calibrate({
          backend,
          quick: !!opts.quick,
          outPath: opts.out,
          logPath,
          resume: !!opts.resume,
          toolVersion: VERSION,
          signal: controller.signal,
          onProgress: (p) => progress.update(p.done, p.total, p.next?.id, p.next?.group),
        });
        progress.stop();
        for (const w of r.warnings) io.err(`clustersim: warning: ${w}`);
        if (r.interrupted || !r.profile) {
          io.err(
            `calibrate: interrupted; ${r.measured} new measurement(s) saved in ${logPath}. ` +
              'Run the same command with --resume to continue.',
          );
          throw new InterruptedError('calibration interrupted');
        }
        io.out(
          opts.json
            ? JSON.stringify(r.profile, null, 2)
            : `${formatProfile(r.profile)}\n\n  profile ${opts.out}, log ${logPath} (${r.measured} measured now, ` +
                `${r.resumed} from the log)`,
        );
      } catch (err) {
        progress.stop();
        throw asUsageError(err);
      } finally {
        removeHandler();
      }
    });
}
