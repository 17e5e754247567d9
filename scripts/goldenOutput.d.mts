/** What a golden file of test/golden holds for one bundled scenario. */
export interface Golden {
  scenario: string;
  stdoutSha256: string;
  simulate: unknown;
  trace: { sha256: string; events: number };
}
export const GOLDEN_SCENARIOS: readonly string[];
export function goldenPath(scenario: string): string;
export function goldenOf(scenario: string, bin?: string): Promise<Golden>;
