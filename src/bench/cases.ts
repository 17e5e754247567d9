import { holdModelEventsPerS } from './holdModel.js';
import { simulateStep } from '../sim/simulateStep.js';
import { resolveScenario } from '../scenario/resolve.js';

/** What one benchmark case measured in one process. */
export interface CaseResult {
  /** The figure of merit: events/s for the engine, wall seconds for simulations. */
  value: number;
  unit: string;
  /** Simulated events, where it applies. */
  events?: number;
}

function timed<T>(f: () => T): { result: T; wallS: number } {
  const t0 = process.hrtime.bigint();
  const result = f();
  return { result, wallS: Number(process.hrtime.bigint() - t0) / 1e9 };
}

function ddpStepCase(model: string, nodes: number, globalBatch: number): () => CaseResult {
  return () => {
    const scenario = resolveScenario(
      { cluster: { preset: 'dgx-a100-80gb', nodes }, model: { preset: model }, training: { globalBatch, microBatch: 1 } },
      'bench',
      '.',
    );
    const { result, wallS } = timed(() => simulateStep(scenario));
    return { value: wallS, unit: 's', events: result.result.eventsFired };
  };
}

/** The benchmark cases by name, in the order they are reported. */
export const BENCH_CASES: Record<string, { title: string; run: () => CaseResult }> = {
  'hold-1e3': { title: 'engine hold model, 1e3 pending events', run: () => ({ value: holdModelEventsPerS(1e3, 5e6), unit: 'events/s' }) },
  'hold-1e5': { title: 'engine hold model, 1e5 pending events', run: () => ({ value: holdModelEventsPerS(1e5, 3e6), unit: 'events/s' }) },
  'hold-1e6': { title: 'engine hold model, 1e6 pending events', run: () => ({ value: holdModelEventsPerS(1e6, 4e6), unit: 'events/s' }) },
  'ddp-llama2-7b-64': { title: 'DDP step, llama2-7b, 64 GPUs (8 dgx-a100-80gb)', run: ddpStepCase('llama2-7b', 8, 64) },
  'ddp-llama2-7b-1024': { title: 'DDP step, llama2-7b, 1,024 GPUs (128 dgx-a100-80gb)', run: ddpStepCase('llama2-7b', 128, 1024) },
};
