import { describe, expect, it } from 'vitest';
import { importMegatronArgs } from '../../src/scenario/importMegatron.js';

/** Mixtral 8x7B as a Megatron-Core launch script would give it (widths from its HF config). */
const MIXTRAL = `--tensor-model-parallel-size 2 --pipeline-model-parallel-size 4 --sequence-parallel --bf16
  --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --group-query-attention --num-query-groups 8
  --ffn-hidden-size 14336 --swiglu --normalization RMSNorm --untie-embeddings-and-output-weights
  --num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 8 --moe-grouped-gemm
  --moe-token-dispatcher-type alltoall --moe-router-load-balancing-type aux_loss`;

const fieldsOf = (text: string) => Object.fromEntries(importMegatronArgs(text).fields.map((f) => [f.path, f.value]));
const refusal = (text: string) => {
  try {
    importMegatronArgs(text);
  } catch (err) {
    return (err as Error).message;
  }
  return 'accepted';
};

describe('Megatron mixture-of-experts flags', () => {
  it('read the experts, top-k, their width (the FFN width by default) and expert parallelism', () => {
    const f = fieldsOf(MIXTRAL);
    expect(f['model.moe.experts']).toBe(8);
    expect(f['model.moe.topK']).toBe(2);
    expect(f['model.moe.expertFfnHidden']).toBe(14336);
    expect(f['parallel.ep']).toBe(8);
    expect(importMegatronArgs(MIXTRAL).warnings.join('\n')).not.toMatch(/experts|moe/);
  });

  it('read shared experts and the dense first layers of --moe-layer-freq', () => {
    const f = fieldsOf(
      `${MIXTRAL} --moe-shared-expert-intermediate-size 2048 ` +
        `--moe-ffn-hidden-size 1024 --moe-layer-freq "([0]*3+[1]*29)"`,
    );
    expect(f['model.moe.sharedExpertFfnHidden']).toBe(2048);
    expect(f['model.moe.expertFfnHidden']).toBe(1024);
    expect(f['model.moe.denseLayers']).toBe(3);
  });

  it('read an expert tensor parallelism of its own (MoE parallel folding), and none where it is tp', () => {
    expect(fieldsOf(`${MIXTRAL} --expert-tensor-parallel-size 1`)['parallel.etp']).toBe(1);
    expect(fieldsOf(`${MIXTRAL} --expert-tensor-parallel-size 2`)['parallel.etp']).toBeUndefined();
  });

  it('read a capacity factor, and padding to it, into the routing', () => {
    const f = fieldsOf(`${MIXTRAL} --moe-expert-capacity-factor 1.0 --moe-pad-expert-input-to-capacity`);
    expect(f['training.routing.capacityFactor']).toBe(1);
    expect(f['training.routing.padToCapacity']).toBe(true);
  });

  it('read flex with DeepEP as the deepep dispatcher (either flag), and group-limited routing', () => {
    const flex = MIXTRAL.replace('alltoall', 'flex');
    expect(fieldsOf(`${flex} --moe-flex-dispatcher-backend deepep`)['parallel.dispatcher']).toBe('deepep');
    expect(fieldsOf(`${flex} --moe-enable-deepep`)['parallel.dispatcher']).toBe('deepep');
    expect(fieldsOf(MIXTRAL)['parallel.dispatcher']).toBeUndefined();
    const f = fieldsOf(`${MIXTRAL} --moe-router-num-groups 4 --moe-router-group-topk 2`);
    expect([f['model.moe.routingGroups'], f['model.moe.groupsPerToken']]).toEqual([4, 2]);
    const warned = importMegatronArgs(`${flex} --moe-enable-deepep --moe-deepep-num-sms 24`).warnings.join('\n');
    expect(warned).toMatch(/moe-deepep-num-sms.*DeepEP's SMs are not taken from the GEMMs/);
  });

  it('refuse what is not modelled instead of running it as something else', () => {
    expect(refusal(MIXTRAL.replace('--moe-token-dispatcher-type alltoall', ''))).toMatch(
      new RegExp(
        /no --moe-token-dispatcher-type \(Megatron default: allgather\): /.source +
          /the alltoall token dispatcher and flex with DeepEP are modelled/.source,
      ),
    );
    expect(refusal(MIXTRAL.replace('alltoall', 'flex'))).toMatch(
      /--moe-token-dispatcher-type flex with backend none given: the alltoall/,
    );
    expect(refusal(`${MIXTRAL.replace('alltoall', 'flex')} --moe-flex-dispatcher-backend hybridep`)).toMatch(
      /flex with backend hybridep: the alltoall token dispatcher and flex with DeepEP are modelled/,
    );
    expect(refusal(`${MIXTRAL} --moe-router-num-groups 4`)).toMatch(/come together/);
    expect(refusal(`${MIXTRAL} --moe-pad-expert-input-to-capacity`)).toMatch(/no capacity to pad to/);
    expect(refusal(`${MIXTRAL} --moe-layer-freq "[1,0]*16"`)).toMatch(/--moe-layer-freq \[1,0\]\*16: only experts/);
    expect(refusal('--num-layers 2 --expert-model-parallel-size 4')).toMatch(/without --num-experts/);
  });
});
