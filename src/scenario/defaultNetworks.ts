/**
 * The scale-out network each node preset ships with, used when a scenario names a node preset and
 * no network: DGX A100 has 8× HDR 200 Gb/s compute NICs, DGX H100 and HGX H200 8× NDR 400 Gb/s (their
 * datasheets); DGX-1 has 4× EDR 100 Gb/s InfiniBand; a generic PCIe server is assumed on 100 Gb/s RoCE. DGX B200 and
 * DGX GB200 have ConnectX-7 400 Gb/s InfiniBand (their user guides); AMD's validated MI300X clusters run RoCE at 400
 * Gb/s (ROCm/cvs configs: 8 Broadcom Thor2 NICs a node); the L40S server follows NVIDIA's 2-8-5-200 design (8 × 200G);
 * the H100 PCIe server is assumed on 400 Gb/s RoCE.
 */
const DEFAULT_NETWORK: Record<string, string> = {
  'dgx-1-v100': 'ib-edr',
  'dgx-a100-80gb': 'ib-hdr',
  'dgx-a100-40gb': 'ib-hdr',
  'dgx-h100': 'ib-ndr',
  'hgx-h200': 'ib-ndr',
  'hgx-h800': 'ib-ndr',
  'pcie-8gpu': 'roce-100',
  'h100-pcie-8gpu': 'roce-400',
  'l40s-8gpu': 'roce-200',
  'hgx-b200': 'ib-ndr',
  'gb200-nvl72': 'ib-ndr',
  'mi300x-8gpu': 'roce-400',
  'mi355x-8gpu': 'roce-400',
};

export function defaultNetworkFor(nodePresetName: string): string {
  return DEFAULT_NETWORK[nodePresetName] ?? 'ib-hdr';
}
