import type { ClusterSpec } from '../hardware/types.js';

/** What a device in the topology graph is. */
export type DeviceKind = 'gpu' | 'nvswitch' | 'pcie-switch' | 'cpu' | 'nic' | 'leaf' | 'spine';

export interface Device {
  id: number;
  kind: DeviceKind;
  /** Node index for devices inside a server; -1 for network switches. */
  node: number;
  /** Human-readable name, for example `n3.gpu5`, `n3.nic2`, `leaf7`, `spine`. */
  name: string;
}

/** A directed link. 1 GB/s = 1 byte/ns, so `bandwidthGBps` is also the capacity in bytes per ns. */
export interface Link {
  id: number;
  from: number;
  to: number;
  bandwidthGBps: number;
  latencyNs: number;
  /** What kind of wire: used to label exposed communication ("DP all-reduce on the NICs"). */
  medium: 'nvlink' | 'pcie' | 'network' | 'socket';
}

/** The cluster as a graph, with the routes collectives and point-to-point transfers use. */
export interface Topology {
  cluster: ClusterSpec;
  devices: Device[];
  links: Link[];
  /** Number of GPUs; global GPU rank g lives on node floor(g / gpusPerNode). */
  gpuCount: number;
  /** Device id of global GPU `g`. */
  gpuDevice(g: number): number;
  /**
   * Links a transfer from GPU `src` to GPU `dst` crosses, in order. `channel` selects among equal
   * paths (which NIC a node-crossing transfer uses, as NCCL spreads channels over NICs); routes are
   * deterministic for a given (src, dst, channel).
   */
  route(src: number, dst: number, channel: number): Int32Array;
  /**
   * Sum of the latencies along `route(src, dst, channel)`, ns: a description of the wires, which times nothing (every
   * transfer takes NCCL's latency per hop, ncclTuning.ts, and the scenario warns that the fields are ignored).
   */
  routeLatencyNs(src: number, dst: number, channel: number): number;
  /** Whether GPU `localGpu` (index inside its node) sits under the PCIe switch of the NIC that `channel` uses. */
  nearNic(localGpu: number, channel: number): boolean;
  /** The GPU (index inside its node) whose PCIe link feeds NIC `nic`: the one PXN hands node-crossing data to. */
  nicProxy(nic: number): number;
}

/** Told when a flow has delivered all its bytes. */
export interface FlowListener {
  onFlowDone(tag: number): void;
}
