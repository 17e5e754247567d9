/**
 * The simulator's speed shortcuts, gathered. Each is exact: it gives what the plain path gives (to the ns, or to the
 * rounding of the rate solve where noted), and each has a switch so that a test can run the plain path beside it
 * (test/sim/shortcuts.test.ts). A shortcut that finds it cannot apply falls back to the plain path; the fallbacks
 * are counted in the step's result (`StepResult.shortcuts`), never silent.
 */
export interface Shortcuts {
  /**
   * A collective whose links no other flow can cross while it runs takes its idle-network time as one event instead
   * of flows (program/idleWindows.ts). Should a flow ever meet such a call, the whole step is simulated again
   * without it (counted: `idleWindowReruns`).
   */
  idleWindows: boolean;
  /**
   * Shadow flows (the traffic of replicas not simulated) on links no other group's flows cross are left out: nobody
   * waits for them and nothing shares their links (program/collectivePlans.ts).
   */
  shadowPruning: boolean;
  /**
   * Identical ring steps of a step-mode collective on an otherwise idle network are skipped, their bytes credited
   * to the links (collectives/collectiveRun.ts).
   */
  repeatSkipping: boolean;
  /**
   * New flows beside bottlenecks they leave untouched are rated without re-solving their component
   * (network/incrementalRates.ts; equal to the full solve up to its rounding). A change the test cannot prove safe
   * gets the full solve (counted: `fullRateSolves`).
   */
  incrementalRates: boolean;
}

export const ALL_SHORTCUTS: Readonly<Shortcuts> = {
  idleWindows: true,
  shadowPruning: true,
  repeatSkipping: true,
  incrementalRates: true,
};

/** Every shortcut on, except those `off` turns off. */
export function shortcutsWith(off: Partial<Shortcuts> = {}): Shortcuts {
  return { ...ALL_SHORTCUTS, ...off };
}

/** How often the shortcuts fell back to the plain path in one step's simulation. */
export interface ShortcutFallbacks {
  /** Times the step was simulated again without idle-time collectives because a flow met one (0 or 1). */
  idleWindowReruns: number;
  /** Rate solves of the flow network, and those that re-solved a whole component (the rest rated new flows alone). */
  rateSolves: number;
  fullRateSolves: number;
}
