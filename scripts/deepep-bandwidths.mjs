// DeepEP's dispatch as simulated against DeepEP's published normal-kernel bandwidths (deepseek-ai/DeepEP
// docs/legacy.md: H800, ~160 GB/s NVLink, one CX7 400 Gb/s NIC a GPU; 4,096 tokens, hidden 7168, top 8 of 256 experts,
// top-4 groups; BF16 combine). Counted as DeepEP's test counts: tokens × distinct nodes reached (own included) ×
// hidden × 2 bytes over the time ("RDMA"), intranode the tokens received ("NVLink"). After `npm run build`:
//   node scripts/deepep-bandwidths.mjs
// test/sim/collectives/deepEpDispatch.test.ts checks the same figures.
import { buildTopology } from '../dist/sim/network/topology.js';
import { CollectiveService } from '../dist/sim/collectives/collectiveService.js';
import { reachProbability } from '../dist/sim/workload/routeSpread.js';
import { networkPreset, nodePreset } from '../dist/sim/hardware/presets.js';
import { defaultNetworkFor } from '../dist/scenario/defaultNetworks.js';

const PUBLISHED_COMBINE_GBPS = { 8: 158, 16: 43, 32: 57, 64: 50 };
const tokens = 4096;
const rowBytes = 7168 * 2;
const node = nodePreset('hgx-h800');
console.log('EP   simulated GB/s   published GB/s   difference');
for (const [ep, published] of Object.entries(PUBLISHED_COMBINE_GBPS).map(([k, v]) => [Number(k), v])) {
  const nodes = ep / 8;
  const routing =
    nodes === 1
      ? { experts: 256, topK: 8, groups: 1, groupsPerToken: 1 }
      : { experts: 256, topK: 8, groups: nodes, groupsPerToken: Math.min(4, nodes) };
  const cluster = { name: `${nodes}x hgx-h800`, node, nodes, network: networkPreset(defaultNetworkFor('hgx-h800')) };
  const config = { mode: 'aggregated', allReduceAlgorithm: 'auto', protocol: 'auto', expertRouting: routing };
  const service = new CollectiveService(buildTopology(cluster), config);
  const ns = service.simulateIdleNs('ep_dispatch', [...Array(ep).keys()], tokens * 8 * rowBytes);
  const per = nodes === 1 ? 256 / ep : 256 / nodes;
  let reached = 0;
  for (let j = 0; j < (nodes === 1 ? ep : nodes); j++) reached += reachProbability(routing, [[j * per, per]]);
  const simulated = (tokens * reached * rowBytes) / ns;
  const diff = (100 * (simulated / published - 1)).toFixed(1);
  console.log(
    `${String(ep).padEnd(5)}${simulated.toFixed(1).padStart(15)}${String(published).padStart(17)}${diff.padStart(12)}%`,
  );
}
