import type { CompileScope } from './stepTypes.js';

/**
 * Point-to-point transfers between consecutive virtual stages: the forward of virtual stage k for a micro-batch needs
 * the activations of stage k − 1; its backward needs the gradients from stage k + 1. Each TP rank sends its 1/t share
 * of `bytes` (Megatron's scatter/gather optimisation); without sequence parallelism the receiving pass all-gathers the
 * shares first (`PassRecord.gather`).
 */
export function addPipelineTransfers(scope: CompileScope, bytesPerRank: number): void {
  const { program, layout, passes, key, simulatedReplicas: replicas, simulatedTp: tpSim } = scope;
  const { pp } = layout;
  const V = pp * scope.ctx.chunksPerStage;
  if (V === 1) return;
  const shadowsOf = transferShadows(scope);
  for (let d = 0; d < replicas; d++) {
    for (let mb = 0; mb < scope.ctx.microBatches; mb++) {
      for (let vs = 0; vs < V; vs++) {
        for (const kind of ['F', 'B'] as const) {
          const from = kind === 'F' ? vs - 1 : vs + 1;
          if (from < 0 || from >= V) continue;
          const src = passes.get(key(d, from, mb, kind))!;
          const dst = passes.get(key(d, vs, mb, kind))!;
          // Every TP rank of the receiving stage needs all shards (they are all-gathered there).
          for (let t = 0; t < tpSim; t++) {
            const label = `${kind === 'F' ? 'activations' : 'gradients'} mb${mb} stage ${from % pp}→${vs % pp}`;
            const shadows = shadowsOf(d, t, from % pp, vs % pp);
            const pair = layout.pair(layout.rank(t, d, from % pp), layout.rank(t, d, vs % pp));
            const x = program.transfer(
              'pp-send',
              label,
              pair,
              bytesPerRank,
              [src.last[t]],
              mb,
              shadows.length > 0 ? shadows : undefined,
            );
            if (dst.gather !== undefined) program.addDep(dst.gather, x);
            for (let u = 0; u < tpSim; u++) {
              program.addDep(dst.first[u], x);
              // A host that waits for its GPU at the start of a pass also waits for what the pass receives.
              if (dst.firstHost?.[u] !== undefined) program.addDep(dst.firstHost[u], x);
            }
          }
        }
      }
    }
  }
}

/**
 * The transfers nobody simulates that run beside replica d's TP rank t sending from stage `a` to stage `b`: the same
 * rank's of the other replicas, and (beside TP rank 0) those of the TP ranks not simulated, of replica d and the
 * others. One list per (replica, TP rank, from, to), which the program interns once.
 */
function transferShadows(scope: CompileScope): (d: number, t: number, a: number, b: number) => (readonly number[])[] {
  const { layout, simulatedReplicas: replicas, simulatedTp: tpSim, needsShadow } = scope;
  const { pp } = layout;
  const lists = new Map<number, (readonly number[])[]>();
  const pairOf = (t: number, e: number, a: number, b: number) =>
    layout.pair(layout.rank(t, e, a), layout.rank(t, e, b));
  return (d, t, a, b) => {
    const listKey = ((d * layout.tp + t) * pp + a) * pp + b;
    let shadows = lists.get(listKey);
    if (shadows) return shadows;
    shadows = [];
    for (let e = replicas; e < layout.dp; e++) {
      const g = pairOf(t, e, a, b);
      if (needsShadow(g)) shadows.push(g);
    }
    if (t === 0) {
      for (let u = tpSim; u < layout.tp; u++) {
        for (const e of [d, ...Array.from({ length: layout.dp - replicas }, (_, i) => replicas + i)]) {
          const g = pairOf(u, e, a, b);
          if (needsShadow(g)) shadows.push(g);
        }
      }
    }
    lists.set(listKey, shadows);
    return shadows;
  };
}
