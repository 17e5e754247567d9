import { Option, type Command } from 'commander';
import { buildTopology } from '../sim/network/topology.js';
import { collectiveSweep, sweepSizes } from '../sim/collectives/sweep.js';
import { nvlsUnavailable } from '../sim/collectives/collectiveService.js';
import {
  ALGORITHMS,
  COLLECTIVE_OPS,
  PROTOCOLS,
  type Algorithm,
  type NcclTestsOp,
  type Protocol,
} from '../sim/collectives/types.js';
import { resolveClusterSection } from '../scenario/resolve.js';
import { loadScenarioFile } from '../scenario/load.js';
import type { ClusterSpec } from '../sim/hardware/types.js';
import { nicCountProblem } from '../scenario/hardwareChecks.js';
import { networkPreset, nodePreset } from '../sim/hardware/presets.js';
import { formatBytes, parseBytes, parseIntAtLeast, parsePositiveInt } from './units.js';
import { UsageError } from './usageError.js';
import { MAX_GPUS } from '../scenario/simulationLimits.js';
import { compareRows, comparisonSummary, formatComparison, readComparison } from './collectiveCompare.js';
import type { Output } from './output.js';

interface CollectiveOptions {
  cluster?: string;
  scenario?: string;
  nodes?: string;
  gpus?: string;
  network?: string;
  nicsPerNode?: string;
  op: NcclTestsOp;
  minBytes: string;
  maxBytes: string;
  stepFactor: string;
  algorithm: Algorithm | 'auto';
  protocol: Protocol | 'auto';
  mode: 'aggregated' | 'step';
  compare?: string;
  json?: boolean;
}

/**
 * The cluster the options name: a node preset (`--cluster`, with `--network` and `--nics-per-node`), or a scenario
 * file's cluster section (`--scenario`), whose node count `--nodes` may replace. Exactly one of the two.
 */
function clusterOf(opts: CollectiveOptions): { cluster: ClusterSpec; nodes: number } {
  if (opts.scenario !== undefined) {
    if (opts.cluster !== undefined)
      throw new UsageError('--scenario and --cluster both name a cluster; give one of them');
    const mixed = [
      opts.network !== undefined && '--network',
      opts.nicsPerNode !== undefined && '--nics-per-node',
    ].filter(Boolean);
    if (mixed.length > 0)
      throw new UsageError(
        `${mixed.join(' and ')}: with --scenario the scenario's cluster section says it; ` +
          'change the file (cluster.network, cluster.node.nicsPerNode) or use --cluster',
      );
    const { raw, source } = loadScenarioFile(opts.scenario);
    const section = (raw as { cluster?: unknown }).cluster;
    if (section === undefined) throw new UsageError(`--scenario ${opts.scenario}: it has no cluster section`);
    const nodes = opts.nodes === undefined ? undefined : parsePositiveInt(opts.nodes, '--nodes');
    const cluster = resolveClusterSection(nodes === undefined ? section : { ...(section as object), nodes }, source);
    return { cluster, nodes: cluster.nodes };
  }
  if (opts.cluster === undefined)
    throw new UsageError('name the cluster: --cluster <node preset> (see `clustersim presets`) or --scenario <file>');
  const nodes = parsePositiveInt(opts.nodes ?? '1', '--nodes');
  // Checked here so that the message names the option, not the scenario field it stands for.
  nodePreset(opts.cluster, '--cluster');
  if (opts.network) networkPreset(opts.network, '--network');
  const nics = opts.nicsPerNode === undefined ? undefined : parsePositiveInt(opts.nicsPerNode, '--nics-per-node');
  const nicProblem =
    nics === undefined ? undefined : nicCountProblem(nodePreset(opts.cluster, '--cluster').gpusPerNode, nics);
  if (nicProblem) throw new UsageError(`--nics-per-node: ${nicProblem}`);
  return {
    cluster: resolveClusterSection(
      {
        preset: opts.cluster,
        nodes,
        ...(opts.network ? { network: opts.network } : {}),
        ...(nics ? { node: { nicsPerNode: nics } } : {}),
      },
      'command line',
    ),
    nodes,
  };
}

function formatRow(cols: (string | number)[], widths: number[]): string {
  return cols.map((c, i) => String(c).padStart(widths[i])).join(' ');
}

/** Examples of --help too long for one line here. */
const COMPARE_EXAMPLE =
  'clustersim collective --cluster dgx-a100-80gb --gpus 8 ' +
  '--compare scenarios/measured/all_reduce_perf-a100-8gpu.csv   # model vs nccl-tests';
const SCENARIO_EXAMPLE =
  'clustersim collective --scenario scenarios/llama2-13b-tp8-pcie.yaml --op all_gather' +
  '   # the cluster a scenario describes';

export function registerCollective(program: Command, io: Output): void {
  program
    .command('collective')
    .description('predict a collective over a cluster at doubling sizes, in the layout of nccl-tests')
    .option('--cluster <preset>', 'node preset, e.g. dgx-a100-80gb (see `clustersim presets`)')
    .option(
      '--scenario <file>',
      'the cluster of a scenario file instead (its cluster section: presets, custom GPU, node and network); ' +
        '--nodes still overrides its node count',
    )
    .option('--nodes <n>', "number of nodes (default 1, or the scenario's)")
    .option('--gpus <n>', 'GPUs taking part (default: all GPUs of all nodes)')
    .option('--network <preset>', "scale-out network preset (default: the node preset's usual one)")
    .option('--nics-per-node <n>', "NICs per node, in place of the node preset's (e.g. 4 for 4 × HDR on an 8-GPU node)")
    .addOption(new Option('--op <op>', 'collective').choices(COLLECTIVE_OPS as string[]).default('all_reduce'))
    .option('--min-bytes <size>', 'smallest size: bytes or with a unit (8, 32768, 1MiB)', '8')
    .option('--max-bytes <size>', 'largest size (8GiB)', '128MiB')
    .option('--step-factor <f>', 'size multiplier between rows (nccl-tests -f)', '2')
    .addOption(
      new Option('--algorithm <a>', 'force an all-reduce algorithm').choices(['auto', ...ALGORITHMS]).default('auto'),
    )
    .addOption(new Option('--protocol <p>', 'force a protocol').choices(['auto', ...PROTOCOLS]).default('auto'))
    .addOption(
      new Option('--mode <m>', 'flows per ring step (step) or per collective (aggregated)')
        .choices(['aggregated', 'step'])
        .default('aggregated'),
    )
    .option(
      '--compare <file>',
      'nccl-tests output (or a CSV with size(B) and time(ns|us) columns) of the same op and GPU count: ' +
        'predict at its sizes and print the error',
    )
    .option(
      '--json',
      'print an array of { bytes, timeUs, algbwGBps, busbwGBps, algorithm, protocol } (with --compare: ' +
        '{ rows with measuredUs and errorPct, summary })',
    )
    .addHelpText(
      'after',
      `
Examples:
  $ clustersim collective --cluster dgx-a100-80gb --nodes 1 --op all_reduce --min-bytes 8 --max-bytes 8GiB
  $ clustersim collective --cluster dgx-h100 --nodes 4 --op all_gather --max-bytes 1GiB --json
  $ clustersim collective --cluster dgx-a100-80gb --nodes 2 --nics-per-node 4 --min-bytes 1MiB --max-bytes 4GiB
  $ ${COMPARE_EXAMPLE}
  $ ${SCENARIO_EXAMPLE}`,
    )
    .action((opts: CollectiveOptions) => {
      const minBytes = parseBytes(opts.minBytes, '--min-bytes');
      const maxBytes = parseBytes(opts.maxBytes, '--max-bytes');
      if (maxBytes < minBytes)
        throw new UsageError(`--max-bytes (${maxBytes}) is smaller than --min-bytes (${minBytes})`);
      const factor = parseIntAtLeast(opts.stepFactor, '--step-factor', 2);
      const { cluster, nodes } = clusterOf(opts);
      // Forced choices the model would otherwise replace without a word.
      if (opts.algorithm !== 'auto' && opts.op !== 'all_reduce') {
        throw new UsageError(
          `--algorithm ${opts.algorithm}: forces the algorithm of all_reduce only; ` +
            `--op ${opts.op} runs as NCCL picks it (leave --algorithm out)`,
        );
      }
      if (
        (opts.algorithm === 'nvls' || opts.algorithm === 'hierarchical') &&
        opts.protocol !== 'auto' &&
        opts.protocol !== 'Simple'
      ) {
        throw new UsageError(
          `--protocol ${opts.protocol}: the ${opts.algorithm} algorithm runs the Simple protocol only; ` +
            'use --protocol Simple or auto',
        );
      }
      const noNvls = opts.algorithm === 'nvls' ? nvlsUnavailable(cluster.node) : undefined;
      if (noNvls) throw new UsageError(`--algorithm ${noNvls}`);
      const total = nodes * cluster.node.gpusPerNode;
      if (total > MAX_GPUS) {
        throw new UsageError(
          `--nodes: ${nodes.toLocaleString('en-US')} × ${cluster.node.gpusPerNode} = ` +
            `${total.toLocaleString('en-US')} GPUs is more than the ${MAX_GPUS.toLocaleString('en-US')} the ` +
            'simulator takes (time grows with the cluster); ' +
            `use at most ${Math.floor(MAX_GPUS / cluster.node.gpusPerNode).toLocaleString('en-US')} nodes`,
        );
      }
      const gpus = opts.gpus === undefined ? total : parsePositiveInt(opts.gpus, '--gpus');
      if (gpus > total) {
        const need = Math.ceil(gpus / cluster.node.gpusPerNode);
        throw new UsageError(
          `--gpus: ${gpus} is more than the ${total} GPUs of ${nodes} × ${cluster.node.name}; ` +
            `add --nodes ${need} (${cluster.node.gpusPerNode} GPUs per node)`,
        );
      }
      if (gpus < 2)
        throw new UsageError(
          '--gpus: a collective needs at least 2 GPUs (a single GPU moves nothing); ' +
            `${total > 1 ? 'give --gpus 2 or more' : 'use a node preset with more GPUs, or --nodes 2'}`,
        );
      if (opts.op === 'send_recv' && gpus !== 2)
        throw new UsageError('--op send_recv: needs --gpus 2 (sender and receiver)');
      const group = opts.op === 'send_recv' && nodes > 1 ? [0, cluster.node.gpusPerNode] : [...Array(gpus).keys()];
      // The group fills nodes in order: with fewer GPUs than the cluster, say how many nodes it spans. A send_recv over
      // several nodes crosses from the first node to the second (what nccl-tests' sendrecv_perf measures across nodes).
      const spanned = new Set(group.map((g) => Math.floor(g / cluster.node.gpusPerNode))).size;
      if (opts.algorithm === 'hierarchical' && spanned > 1 && gpus % cluster.node.gpusPerNode !== 0) {
        throw new UsageError(
          `--algorithm hierarchical: needs the same number of GPUs on every node, and --gpus ${gpus} fills ` +
            `${spanned - 1} node(s) of ${cluster.node.gpusPerNode} and leaves ${gpus % cluster.node.gpusPerNode} on ` +
            `the last; give a multiple of ${cluster.node.gpusPerNode}, or at most ${cluster.node.gpusPerNode}`,
        );
      }
      const where = spanned === nodes ? cluster.name : `${spanned} of ${cluster.name}`;
      const gpusText =
        opts.op === 'send_recv'
          ? `2 GPUs (${spanned > 1 ? 'GPU 0 of node 0 to GPU 0 of node 1' : 'GPU 0 to GPU 1'})`
          : `${group.length} GPUs`;
      const topology = buildTopology(cluster);
      const measured = opts.compare ? readComparison(opts.compare, opts.op, group.length, cluster.node) : undefined;
      const sizes = measured
        ? measured.map((p) => p.bytes)
        : wholeElementSizes(opts.op, sweepSizes(minBytes, maxBytes, factor), group.length);
      if (sizes.length === 0) {
        const least = perRankCount(opts.op)
          ? ` per rank (${group.length} ranks × 4 B = ${4 * group.length} B at least)`
          : ' (4 B)';
        throw new UsageError(`--max-bytes: ${maxBytes} B holds no whole float${least}; raise it`);
      }
      const tooBig = sizes.filter((b) => b > cluster.node.gpu.memoryBytes);
      if (tooBig.length > 0) {
        io.err(
          `clustersim: warning: ${tooBig.length} of the sizes (from ${formatBytes(tooBig[0])}) ` +
            `exceed the ${formatBytes(cluster.node.gpu.memoryBytes)} of one ${cluster.node.gpu.name}: ` +
            'no GPU could hold the buffer, so those rows are arithmetic only',
        );
      }
      const rows = collectiveSweep(topology, opts.op, group, sizes, {
        mode: opts.mode,
        allReduceAlgorithm: opts.algorithm,
        protocol: opts.protocol,
      });
      if (measured) {
        const compared = compareRows(rows, measured);
        const summary = comparisonSummary(compared);
        if (opts.json) io.out(JSON.stringify({ rows: compared, summary }, null, 2));
        else
          io.out(
            formatComparison(compared, summary, `${opts.op} over ${gpusText}, ${where}: predicted vs ${opts.compare}`),
          );
        return;
      }
      if (opts.json) {
        io.out(JSON.stringify(rows, null, 2));
        return;
      }
      const w = [12, 12, 6, 6, 10, 9, 9, 14];
      const lines = [
        `# clustersim collective: ${opts.op} over ${gpusText}, ${where}, ` +
          `${cluster.network.linkGbps} Gb/s ${cluster.network.fabric} (predicted, ${opts.mode} flows)`,
        '#',
        formatRow(['#      size', 'count', 'type', 'redop', 'time', 'algbw', 'busbw', 'algorithm'], w),
        formatRow(['#       (B)', '(elements)', '', '', '(us)', '(GB/s)', '(GB/s)', ''], w),
        ...rows.map((r) =>
          formatRow(
            [
              r.bytes,
              countColumn(opts.op, r.bytes, group.length),
              'float',
              opts.op === 'all_reduce' || opts.op === 'reduce_scatter' ? 'sum' : 'none',
              r.timeUs.toFixed(2),
              r.algbwGBps.toFixed(2),
              r.busbwGBps.toFixed(2),
              `${opts.op === 'send_recv' || opts.op === 'all_to_all' ? 'p2p' : r.algorithm}/${r.protocol}`,
            ],
            w,
          ),
        ),
        `# Avg bus bandwidth    : ${(rows.reduce((a, r) => a + r.busbwGBps, 0) / rows.length).toFixed(3)}`,
      ];
      io.out(lines.join('\n'));
    });
}

/**
 * The sizes as nccl-tests runs and prints them: each cut down to whole floats (`count = size / wordSize`), for
 * all_gather and reduce_scatter to whole floats per rank (`(count / nranks) · nranks`, its getCollByteCount), so a
 * row's size is what moves. Sizes left with nothing to move are dropped, and a size that repeats is kept once.
 */
export function wholeElementSizes(op: string, sizes: readonly number[], ranks: number): number[] {
  const unit = perRankCount(op) ? 4 * ranks : 4;
  return [...new Set(sizes.map((b) => Math.floor(b / unit) * unit))].filter((b) => b > 0);
}

/**
 * The count column as nccl-tests prints it (its `paramcount`, in floats): the whole buffer for all_reduce, broadcast
 * and send_recv; each rank's share for all_gather and reduce_scatter (AllGatherGetCollByteCount,
 * ReduceScatterGetCollByteCount), whose size column is the whole gathered or scattered buffer; each peer's share for
 * all_to_all (AlltoAllGetCollByteCount), whose size column is one rank's whole send buffer.
 */
export function countColumn(op: string, bytes: number, ranks: number): number {
  const elements = Math.floor(bytes / 4);
  return perRankCount(op) ? Math.floor(elements / ranks) : elements;
}

/** Whether nccl-tests counts this op's elements per rank (all_gather, reduce_scatter) or per peer (alltoall). */
function perRankCount(op: string): boolean {
  return op === 'all_gather' || op === 'reduce_scatter' || op === 'all_to_all';
}
