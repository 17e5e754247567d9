import type { Command } from 'commander';
import { GPU_PRESETS } from '../sim/hardware/gpus.js';
import { NODE_PRESETS } from '../sim/hardware/nodes.js';
import { NETWORK_PRESETS } from '../sim/hardware/networks.js';
import { MODEL_PRESET_NAMES, modelPreset } from '../sim/workload/modelPresets.js';
import { parameterCount } from '../sim/workload/model.js';
import { defaultNetworkFor } from '../scenario/defaultNetworks.js';
import { architectureOf } from '../sim/hardware/architectures.js';
import type { Output } from './output.js';
import { table } from '../report/textTable.js';

/** Everything the presets command shows, as plain data. */
export function presetCatalogue() {
  return {
    gpus: Object.entries(GPU_PRESETS).map(([name, g]) => ({
      name,
      architecture: architectureOf(g),
      peakTflops: g.peakTflops,
      memoryGiB: g.memoryBytes / 2 ** 30,
      hbmBandwidthGBps: g.hbmBandwidthGBps,
      nvlinkBandwidthGBps: g.nvlinkBandwidthGBps,
      pcieGen: g.pcieGen,
      source: g.source,
    })),
    nodes: Object.entries(NODE_PRESETS).map(([name, n]) => ({
      name,
      gpu: n.gpu.name,
      gpusPerNode: n.gpusPerNode,
      intra: n.intra,
      nvlinkBandwidthGBps: n.nvlinkBandwidthGBps,
      nvls: n.nvls,
      nicsPerNode: n.nicsPerNode,
      hostMemoryGiB: n.hostMemoryBytes === undefined ? null : n.hostMemoryBytes / 2 ** 30,
      hostAdamParamsPerS: n.hostAdamParamsPerS,
      defaultNetwork: defaultNetworkFor(name),
      source: n.source,
    })),
    networks: Object.entries(NETWORK_PRESETS).map(([name, n]) => ({
      name,
      fabric: n.fabric,
      linkGbps: n.linkGbps,
      railOptimized: n.railOptimized,
      oversubscription: n.oversubscription,
      source: n.source,
    })),
    models: MODEL_PRESET_NAMES.map((name) => {
      const m = modelPreset(name);
      return {
        name,
        arch: m.arch,
        layers: m.layers,
        hidden: m.hidden,
        heads: m.heads,
        kvHeads: m.kvHeads,
        seqLen: m.seqLen,
        params: parameterCount(m),
      };
    }),
  };
}

function billions(n: number): string {
  return n >= 1e9 ? `${(n / 1e9).toFixed(2)}B` : `${(n / 1e6).toFixed(1)}M`;
}

export function registerPresets(program: Command, io: Output): void {
  program
    .command('presets')
    .description('list the GPU, node, network and model presets a scenario can name')
    .option('--json', 'print the catalogue as JSON')
    .addHelpText('after', '\nExamples:\n  $ clustersim presets\n  $ clustersim presets --json')
    .action((opts: { json?: boolean }) => {
      const c = presetCatalogue();
      if (opts.json) {
        io.out(JSON.stringify(c, null, 2));
        return;
      }
      const text = [
        'GPUs (dense peaks, TFLOP/s)',
        table(
          [
            'name',
            'arch',
            'fp32',
            'tf32',
            'bf16',
            'fp16',
            'fp8',
            'memory GiB',
            'HBM GB/s',
            'NVLink or xGMI GB/s each way',
            'PCIe',
          ],
          c.gpus.map((g) => [
            g.name,
            g.architecture,
            g.peakTflops.fp32 ?? '-',
            g.peakTflops.tf32 ?? '-',
            g.peakTflops.bf16 ?? '-',
            g.peakTflops.fp16 ?? '-',
            g.peakTflops.fp8 ?? '-',
            g.memoryGiB.toFixed(1),
            g.hbmBandwidthGBps,
            g.nvlinkBandwidthGBps,
            `gen${g.pcieGen}`,
          ]),
        ),
        '',
        'Nodes (cluster.preset)',
        table(
          [
            'name',
            'gpu',
            'GPUs',
            'intra-node',
            'NVLink or xGMI GB/s each way (busbw)',
            'NVLS',
            'NICs',
            'host GiB',
            'host Adam Gparam/s',
            'default network',
          ],
          c.nodes.map((n) => [
            n.name,
            n.gpu,
            n.gpusPerNode,
            n.intra,
            n.nvlinkBandwidthGBps,
            n.nvls ? 'yes' : 'no',
            n.nicsPerNode,
            n.hostMemoryGiB === null ? '-' : Math.round(n.hostMemoryGiB),
            (n.hostAdamParamsPerS / 1e9).toFixed(1),
            n.defaultNetwork,
          ]),
        ),
        '',
        'Networks (cluster.network)',
        table(
          ['name', 'fabric', 'Gb/s per NIC', 'rail-optimised', 'oversubscription'],
          c.networks.map((n) => [
            n.name,
            n.fabric,
            n.linkGbps,
            n.railOptimized ? 'yes' : 'no',
            `${n.oversubscription}:1`,
          ]),
        ),
        '',
        'Models (model.preset)',
        table(
          ['name', 'arch', 'layers', 'hidden', 'heads', 'kv heads', 'seq', 'params'],
          c.models.map((m) => [m.name, m.arch, m.layers, m.hidden, m.heads, m.kvHeads, m.seqLen, billions(m.params)]),
        ),
      ];
      io.out(text.join('\n'));
    });
}
