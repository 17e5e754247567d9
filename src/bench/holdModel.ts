import { Simulator } from '../sim/engine/simulator.js';
import { randomStream } from '../sim/engine/random.js';

/**
 * The classic hold-model benchmark of event-list implementations: `pending` events wait; each popped
 * event schedules one more at a random delay, so the queue size stays constant. Returns events per second.
 */
export function holdModelEventsPerS(pending: number, events: number, seed = 1): number {
  const rng = randomStream(seed, 'hold');
  const sim = new Simulator();
  const delays = new Float64Array(4096);
  for (let i = 0; i < delays.length; i++) delays[i] = 1 + Math.floor(rng.next() * 1_000_000);
  let fired = 0;
  let k = 0;
  const target = {
    onEvent(): void {
      fired++;
      if (fired + pending <= events) sim.schedule(delays[k++ & 4095], target);
    },
  };
  for (let i = 0; i < pending; i++) sim.schedule(delays[k++ & 4095], target);
  const t0 = process.hrtime.bigint();
  sim.run();
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  return fired / s;
}
