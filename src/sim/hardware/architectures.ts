/**
 * GPU architectures: what a generation decides beyond its peaks and bandwidths. A GPU preset names its architecture;
 * a GPU a scenario describes names one (`cluster.gpu.architecture`) to take that generation's kernel figures from
 * its reference preset instead of inheriting the node preset's silently.
 */
export const GPU_ARCHITECTURES = ['volta', 'ampere', 'ada', 'hopper', 'blackwell', 'cdna3', 'cdna4'] as const;
export type GpuArchitecture = (typeof GPU_ARCHITECTURES)[number];

/** The row of NCCL's per-generation tuning tables (tuning.cc `llMaxBws`, the ring plateau) a GPU is timed with. */
export type NcclGeneration = 'volta' | 'ampere' | 'hopper' | 'blackwell';

export interface ArchitectureTraits {
  vendor: 'nvidia' | 'amd';
  /** How output names it. */
  label: string;
  /** The collective library its training stacks run. */
  collectiveLibrary: 'NCCL' | 'RCCL';
  /** What its GPU-to-GPU links are called in output. */
  scaleUpLinkName: 'NVLink' | 'Infinity Fabric';
  /**
   * NCCL's table row: by compute capability (tuning.cc indexes Volta, Ampere (8.x, Ada included), Hopper, Blackwell).
   * RCCL's tuner on AMD reads its own per-size tables (`rcclTuningModel`, rccl src/graph/tuning.cc) that are not
   * modelled; the Hopper row stands in for them.
   */
  ncclGeneration: NcclGeneration;
  /** The GPU preset whose kernel figures a GPU of the scenario's own of this architecture starts from. */
  referenceGpu: string;
  /**
   * Transformer Engine's userbuffers overlap of tensor-parallel communication with GEMMs (`--tp-comm-overlap`) runs
   * on it: NVIDIA GPUs from Ampere on (TE's userbuffers use CUDA multicast/NVLink copies; ROCm's TE fork has no
   * userbuffers backend).
   */
  tpCommOverlap: boolean;
}

export const ARCHITECTURE_TRAITS: Readonly<Record<GpuArchitecture, ArchitectureTraits>> = Object.freeze({
  volta: nvidia('Volta', 'volta', 'v100-sxm2-32gb', false),
  ampere: nvidia('Ampere', 'ampere', 'a100-sxm4-80gb', true),
  ada: nvidia('Ada Lovelace', 'ampere', 'l40s-48gb', true),
  hopper: nvidia('Hopper', 'hopper', 'h100-sxm5-80gb', true),
  blackwell: nvidia('Blackwell', 'blackwell', 'b200-sxm-180gb', true),
  cdna3: amd('CDNA 3', 'mi300x-192gb'),
  cdna4: amd('CDNA 4', 'mi355x-288gb'),
});

function nvidia(label: string, gen: NcclGeneration, referenceGpu: string, tpCommOverlap: boolean): ArchitectureTraits {
  return {
    vendor: 'nvidia',
    label,
    collectiveLibrary: 'NCCL',
    scaleUpLinkName: 'NVLink',
    ncclGeneration: gen,
    referenceGpu,
    tpCommOverlap,
  };
}

function amd(label: string, referenceGpu: string): ArchitectureTraits {
  return {
    vendor: 'amd',
    label,
    collectiveLibrary: 'RCCL',
    scaleUpLinkName: 'Infinity Fabric',
    ncclGeneration: 'hopper',
    referenceGpu,
    tpCommOverlap: false,
  };
}

/**
 * The architecture of a GPU that does not name one (a calibrated CPU, a GPU from an older profile): by CUDA compute
 * capability, Ampere when that is absent too.
 */
export function architectureOfComputeCapability(computeCapability: number | undefined): GpuArchitecture {
  if (computeCapability === undefined) return 'ampere';
  if (computeCapability >= 10) return 'blackwell';
  if (computeCapability >= 9) return 'hopper';
  if (computeCapability >= 8.9) return 'ada';
  if (computeCapability >= 8) return 'ampere';
  return 'volta';
}

/** The architecture of `gpu`: its own, or the one its compute capability implies. */
export function architectureOf(gpu: { architecture?: GpuArchitecture; computeCapability?: number }): GpuArchitecture {
  return gpu.architecture ?? architectureOfComputeCapability(gpu.computeCapability);
}

/** The traits of `gpu`'s architecture. */
export function traitsOf(gpu: { architecture?: GpuArchitecture; computeCapability?: number }): ArchitectureTraits {
  return ARCHITECTURE_TRAITS[architectureOf(gpu)];
}
