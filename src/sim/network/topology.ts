import { nodeLinkLayout, type NodeLinkKind, type NodeShape } from './nodeLinks.js';
import { checkClusterSpec } from './clusterSpecChecks.js';
import type { ClusterSpec } from '../hardware/types.js';
import type { Device, DeviceKind, Link, Topology } from './types.js';

/**
 * Builds the device/link graph of a cluster and answers routes by arithmetic on a fixed per-node layout, so
 * building is O(devices + links) and no O(GPUs²) table exists (16,384 GPUs build in well under a second).
 *
 * Per node: GPUs; one logical NVSwitch (`nvswitch` fabric) or direct NVLinks (`nvlink-mesh`); PCIe switches of
 * `gpusPerPcieSwitch` GPUs, split over (up to) two CPU sockets; NICs, NIC r on the switch of GPU r·G/nicsPerNode.
 * Between nodes: a two-level fat tree, leaves and one aggregated spine device whose leaf↔spine link carries
 * (sum of that leaf's downlinks) / oversubscription. Rail-optimised: NIC r of the nodes of group g hangs off
 * leaf (g, r). Every link is directed; each wire is two links.
 *
 * Latency split (so that a route's latency sums to the spec's figures): the two NVSwitch hops each carry half
 * of `nvlinkLatencyNs`, a direct NVLink all of it; PCIe and socket hops half of `pcieLatencyNs`; NIC↔leaf and
 * leaf↔spine hops half of the network's `linkLatencyNs`.
 */
export function buildTopology(cluster: ClusterSpec): ClusterTopology {
  return new ClusterTopology(cluster);
}

/** Routes beyond this many cached entries reset the cache (a JS Map holds at most ~16.7M entries). */
const ROUTE_CACHE_LIMIT = 4_000_000;

export class ClusterTopology implements Topology {
  readonly cluster: ClusterSpec;
  readonly devices: Device[] = [];
  readonly links: Link[] = [];
  readonly gpuCount: number;
  /** Capacity of each link in GB/s (= bytes/ns), indexed by link id; ready for `FlowNetwork`. */
  readonly linkBandwidthGBps: Float64Array;
  /** Leaf switch count; leaf `l` is device `leafDevice(l)`. */
  readonly leafCount: number;

  private readonly G: number;
  private readonly N: number;
  private readonly gpp: number;
  private readonly sockets: number;
  private readonly devPerNode: number;
  private readonly linksPerNode: number;
  private readonly nodeLinkEnd: number;
  /** Where each kind of link starts in a node's block of link ids (nodeLinks.ts). */
  private readonly o: Record<NodeLinkKind, number>;
  private readonly nicSwitch: Int32Array;
  /** Local link offset of the direct NVLink a→b (index a·G+b), or -1. */
  private readonly meshLink: Int32Array;
  /** For non-neighbour mesh pairs: candidate intermediate GPUs, best first. */
  private readonly meshVia: number[][];
  private readonly keyMod: number;
  private readonly latencyNs: Float64Array;
  private readonly cache = new Map<number, Int32Array>();
  private readonly scratch = new Int32Array(32);
  private len = 0;

  constructor(cluster: ClusterSpec) {
    const node = cluster.node;
    checkClusterSpec(cluster);
    this.cluster = cluster;
    const G = (this.G = node.gpusPerNode);
    const N = (this.N = node.nicsPerNode);
    const gpp = (this.gpp = node.gpusPerPcieSwitch);
    const P = Math.ceil(G / gpp);
    const S = (this.sockets = P >= 2 ? 2 : 1);
    const nvs = node.intra === 'nvswitch' ? 1 : 0;
    const mesh = node.intra === 'nvlink-mesh' ? (node.nvlinkMesh ?? []) : [];
    this.gpuCount = cluster.nodes * G;
    this.devPerNode = G + nvs + P + S + N;
    const layout = nodeLinkLayout({ nvs, G, meshPairs: mesh.length, P, S, N });
    this.o = layout.offsets;
    this.linksPerNode = layout.linksPerNode;
    this.nodeLinkEnd = cluster.nodes * this.linksPerNode;

    this.nicSwitch = new Int32Array(N);
    for (let r = 0; r < N; r++) this.nicSwitch[r] = Math.floor(Math.floor((r * G) / N) / gpp);
    this.meshLink = new Int32Array(G * G).fill(-1);
    const linkCount = new Float64Array(G * G);
    mesh.forEach((p, k) => {
      this.meshLink[p.a * G + p.b] = this.o.mesh + 2 * k;
      this.meshLink[p.b * G + p.a] = this.o.mesh + 2 * k + 1;
      linkCount[p.a * G + p.b] = linkCount[p.b * G + p.a] = p.links;
    });
    this.meshVia = meshIntermediates(G, linkCount);
    this.keyMod = Math.max(1, N, ...this.meshVia.map((c) => c.length));

    const groups = Math.ceil(cluster.nodes / cluster.network.nodesPerLeaf);
    this.leafCount = cluster.network.railOptimized ? groups * N : groups;
    this.addDevices(P, S, nvs);
    const maxLinks = Math.max(1, ...Array.from({ length: G }, (_, a) => sumRow(linkCount, a, G)));
    const leafDown = new Float64Array(this.leafCount);
    for (let n = 0; n < cluster.nodes; n++)
      this.addNodeLinks(n, { P, S, nvs, perMeshLinkGBps: node.nvlinkBandwidthGBps / maxLinks }, leafDown);
    this.addSpineLinks(leafDown);
    this.linkBandwidthGBps = Float64Array.from(this.links, (l) => l.bandwidthGBps);
    this.latencyNs = Float64Array.from(this.links, (l) => l.latencyNs);
  }

  /** Every device, node by node (GPUs, NVSwitch, PCIe switches, sockets, NICs), then the leaves and the spine. */
  private addDevices(P: number, S: number, nvs: number): void {
    const add = (kind: DeviceKind, n: number, name: string) =>
      this.devices.push({ id: this.devices.length, kind, node: n, name });
    for (let n = 0; n < this.cluster.nodes; n++) {
      for (let i = 0; i < this.G; i++) add('gpu', n, `n${n}.gpu${i}`);
      if (nvs) add('nvswitch', n, `n${n}.nvswitch`);
      for (let s = 0; s < P; s++) add('pcie-switch', n, `n${n}.pcie${s}`);
      for (let c = 0; c < S; c++) add('cpu', n, `n${n}.cpu${c}`);
      for (let r = 0; r < this.N; r++) add('nic', n, `n${n}.nic${r}`);
    }
    for (let l = 0; l < this.leafCount; l++) add('leaf', -1, `leaf${l}`);
    if (this.leafCount > 1) add('spine', -1, 'spine');
  }

  private link(from: number, to: number, bandwidthGBps: number, latencyNs: number, medium: Link['medium']): void {
    this.links.push({ id: this.links.length, from, to, bandwidthGBps, latencyNs, medium });
  }

  /**
   * Node n's links in the layout order of `nodeLinkLayout`: NVLink (switch or mesh), PCIe to the switches and
   * sockets, the inter-socket link, the NICs' PCIe and their network links to the leaves (whose downward
   * capacity `leafDown` adds up, for the spine).
   */
  private addNodeLinks(n: number, c: NodeShape, leafDown: Float64Array): void {
    const node = this.cluster.node;
    const net = this.cluster.network;
    const { G, N, gpp } = this;
    const { P, S, nvs } = c;
    const mesh = node.intra === 'nvlink-mesh' ? (node.nvlinkMesh ?? []) : [];
    const nicGBps = (net.linkGbps / 8) * net.linkEfficiency;
    const pcieLat = node.pcieLatencyNs / 2;
    const b = n * this.devPerNode;
    const nvsDev = b + G;
    const sw = b + G + nvs;
    const cpu = sw + P;
    const nic = cpu + S;
    for (let i = 0; i < nvs * G; i++)
      this.link(b + i, nvsDev, node.nvlinkBandwidthGBps, node.nvlinkLatencyNs / 2, 'nvlink');
    for (let i = 0; i < nvs * G; i++)
      this.link(nvsDev, b + i, node.nvlinkBandwidthGBps, node.nvlinkLatencyNs / 2, 'nvlink');
    for (const p of mesh) {
      this.link(b + p.a, b + p.b, p.links * c.perMeshLinkGBps, node.nvlinkLatencyNs, 'nvlink');
      this.link(b + p.b, b + p.a, p.links * c.perMeshLinkGBps, node.nvlinkLatencyNs, 'nvlink');
    }
    for (let i = 0; i < G; i++) this.link(b + i, sw + Math.floor(i / gpp), node.pcieBandwidthGBps, pcieLat, 'pcie');
    for (let i = 0; i < G; i++) this.link(sw + Math.floor(i / gpp), b + i, node.pcieBandwidthGBps, pcieLat, 'pcie');
    for (let s = 0; s < P; s++) this.link(sw + s, cpu + this.socketOf(s), node.pcieBandwidthGBps, pcieLat, 'pcie');
    for (let s = 0; s < P; s++) this.link(cpu + this.socketOf(s), sw + s, node.pcieBandwidthGBps, pcieLat, 'pcie');
    if (S === 2) {
      this.link(cpu, cpu + 1, node.interSocketBandwidthGBps, pcieLat, 'socket');
      this.link(cpu + 1, cpu, node.interSocketBandwidthGBps, pcieLat, 'socket');
    }
    for (let r = 0; r < N; r++) this.link(nic + r, sw + this.nicSwitch[r], node.pcieBandwidthGBps, pcieLat, 'pcie');
    for (let r = 0; r < N; r++) this.link(sw + this.nicSwitch[r], nic + r, node.pcieBandwidthGBps, pcieLat, 'pcie');
    for (let r = 0; r < N; r++) {
      const leaf = this.leafOf(n, r);
      leafDown[leaf] += nicGBps;
      this.link(nic + r, this.leafDevice(leaf), nicGBps, net.linkLatencyNs / 2, 'network');
    }
    for (let r = 0; r < N; r++)
      this.link(this.leafDevice(this.leafOf(n, r)), nic + r, nicGBps, net.linkLatencyNs / 2, 'network');
  }

  /** Each leaf's links to the spine and back (with more than one leaf): its downward capacity / oversubscription. */
  private addSpineLinks(leafDown: Float64Array): void {
    if (this.leafCount <= 1) return;
    const net = this.cluster.network;
    const spine = this.leafDevice(this.leafCount);
    for (let l = 0; l < this.leafCount; l++)
      this.link(this.leafDevice(l), spine, leafDown[l] / net.oversubscription, net.linkLatencyNs / 2, 'network');
    for (let l = 0; l < this.leafCount; l++)
      this.link(spine, this.leafDevice(l), leafDown[l] / net.oversubscription, net.linkLatencyNs / 2, 'network');
  }

  gpuDevice(g: number): number {
    return Math.floor(g / this.G) * this.devPerNode + (g % this.G);
  }

  /** Device id of leaf `l` (the spine is `leafDevice(leafCount)` when there is more than one leaf). */
  leafDevice(l: number): number {
    return this.cluster.nodes * this.devPerNode + l;
  }

  /** Leaf switch that NIC `nic` of node `node` is cabled to. */
  leafOf(node: number, nic: number): number {
    const group = Math.floor(node / this.cluster.network.nodesPerLeaf);
    return this.cluster.network.railOptimized ? group * this.N + nic : group;
  }

  /** Whether GPU `localGpu` (index inside its node) sits under the PCIe switch of the NIC that `channel` uses. */
  nearNic(localGpu: number, channel: number): boolean {
    return Math.floor(localGpu / this.gpp) === this.nicSwitch[this.nicForChannel(channel)];
  }

  nicProxy(nic: number): number {
    return Math.min(this.G - 1, this.nicSwitch[nic] * this.gpp + (nic % this.gpp));
  }

  /** NIC a node-crossing transfer on `channel` uses (NCCL spreads channels over the NICs). */
  nicForChannel(channel: number): number {
    return mod(channel, this.N);
  }

  /**
   * Links from GPU `src` to GPU `dst` (global ranks). Across nodes, `channel` picks NIC `channel mod nicsPerNode`
   * on both ends (same rail), reached over NVLink through the NIC's neighbour GPU on NVSwitch nodes (PXN); inside a
   * DGX-1 mesh it picks among the common neighbours of a non-adjacent pair.
   * The array is cached and shared: do not mutate it. O(path length) on first use, a Map hit after.
   */
  route(src: number, dst: number, channel: number): Int32Array {
    const G = this.G;
    const sameNode = Math.floor(src / G) === Math.floor(dst / G);
    let c = 0;
    if (!sameNode) c = mod(channel, this.N);
    else if (src !== dst && this.meshVia.length > 0) {
      const via = this.meshVia[(src % G) * G + (dst % G)];
      if (via.length > 0) c = mod(channel, via.length);
    }
    const key = (src * this.gpuCount + dst) * this.keyMod + c;
    let r = this.cache.get(key);
    if (r === undefined) {
      r = this.buildRoute(src, dst, c);
      if (this.cache.size >= ROUTE_CACHE_LIMIT) this.cache.clear();
      this.cache.set(key, r);
    }
    return r;
  }

  /** Sum of link latencies along `route(src, dst, channel)`, ns. */
  routeLatencyNs(src: number, dst: number, channel: number): number {
    const r = this.route(src, dst, channel);
    let t = 0;
    for (let k = 0; k < r.length; k++) t += this.latencyNs[r[k]];
    return t;
  }

  /* eslint-disable-next-line max-lines-per-function -- one route, tier by tier (NVLink, PCIe, the NICs, leaves and
     spine) with its cache; debt: to split by tier */
  private buildRoute(src: number, dst: number, c: number): Int32Array {
    const G = this.G;
    const o = this.o;
    const na = Math.floor(src / G);
    const nb = Math.floor(dst / G);
    const i = src % G;
    const j = dst % G;
    this.len = 0;
    if (src === dst) return new Int32Array(0);
    if (na === nb) {
      const base = na * this.linksPerNode;
      const intra = this.cluster.node.intra;
      if (intra === 'nvswitch') {
        this.push(base + o.nvsUp + i);
        this.push(base + o.nvsDown + j);
      } else if (intra === 'nvlink-mesh' && this.meshLink[i * G + j] >= 0) {
        this.push(base + this.meshLink[i * G + j]);
      } else if (intra === 'nvlink-mesh' && this.meshVia[i * G + j].length > 0) {
        const k = this.meshVia[i * G + j][c];
        this.push(base + this.meshLink[i * G + k]);
        this.push(base + this.meshLink[k * G + j]);
      } else {
        const si = Math.floor(i / this.gpp);
        const sj = Math.floor(j / this.gpp);
        this.push(base + o.gpuUp + i);
        this.switchToSwitch(base, si, sj);
        this.push(base + o.gpuDown + j);
      }
      return this.scratch.slice(0, this.len);
    }
    // Across nodes: GPU → (PCIe) NIC r → leaf (→ spine → leaf) → NIC r → (PCIe) GPU.
    const r = c;
    const baseA = na * this.linksPerNode;
    const baseB = nb * this.linksPerNode;
    const sn = this.nicSwitch[r];
    // PXN (NCCL ≥ 2.12): on an NVSwitch node a GPU other than the NIC's own neighbour hands its data over
    // NVLink to that neighbour, which feeds the NIC; so each GPU's PCIe link carries only its own NIC's traffic.
    const pxn = this.cluster.node.intra === 'nvswitch';
    const proxy = this.nicProxy(r);
    if (pxn && i !== proxy) {
      this.push(baseA + o.nvsUp + i);
      this.push(baseA + o.nvsDown + proxy);
      this.push(baseA + o.gpuUp + proxy);
    } else {
      this.push(baseA + o.gpuUp + i);
      this.switchToSwitch(baseA, Math.floor(i / this.gpp), sn);
    }
    this.push(baseA + o.nicDown + r);
    this.push(baseA + o.netOut + r);
    const la = this.leafOf(na, r);
    const lb = this.leafOf(nb, r);
    if (la !== lb) {
      this.push(this.nodeLinkEnd + la);
      this.push(this.nodeLinkEnd + this.leafCount + lb);
    }
    this.push(baseB + o.netIn + r);
    this.push(baseB + o.nicUp + r);
    if (pxn && j !== proxy) {
      this.push(baseB + o.gpuDown + proxy);
      this.push(baseB + o.nvsUp + proxy);
      this.push(baseB + o.nvsDown + j);
    } else {
      this.switchToSwitch(baseB, sn, Math.floor(j / this.gpp));
      this.push(baseB + o.gpuDown + j);
    }
    return this.scratch.slice(0, this.len);
  }

  /** Appends switch `a` → CPU (→ other CPU) → switch `b` inside one node; nothing when a = b. */
  private switchToSwitch(base: number, a: number, b: number): void {
    if (a === b) return;
    const o = this.o;
    const ca = this.socketOf(a);
    const cb = this.socketOf(b);
    this.push(base + o.swUp + a);
    if (ca !== cb) this.push(base + o.sock + ca);
    this.push(base + o.swDown + b);
  }

  private socketOf(pcieSwitch: number): number {
    const P = Math.ceil(this.G / this.gpp);
    return this.sockets === 2 ? Math.floor((pcieSwitch * 2) / P) : 0;
  }

  private push(linkId: number): void {
    this.scratch[this.len++] = linkId;
  }
}

/** For each ordered pair (a, b) that is not a direct NVLink pair, the common neighbours, widest path first. */
function meshIntermediates(G: number, links: Float64Array): number[][] {
  const out: number[][] = [];
  for (let a = 0; a < G; a++) {
    for (let b = 0; b < G; b++) {
      const cands: number[] = [];
      if (a !== b && links[a * G + b] === 0) {
        for (let k = 0; k < G; k++)
          if (k !== a && k !== b && links[a * G + k] > 0 && links[k * G + b] > 0) cands.push(k);
        const w = (k: number) => Math.min(links[a * G + k], links[k * G + b]);
        cands.sort((x, y) => w(y) - w(x) || x - y);
      }
      out.push(cands);
    }
  }
  return out;
}

function sumRow(m: Float64Array, a: number, G: number): number {
  let s = 0;
  for (let b = 0; b < G; b++) s += m[a * G + b];
  return s;
}

function mod(x: number, m: number): number {
  return ((x % m) + m) % m;
}
