import { FITTED_CONSTANTS, fitGoldenSection, meanSquaredPct } from './fittedConstants.js';

/**
 * `npm run validate -- --fit`: fits each of the project's fitted constants on its declared training subset
 * (fittedConstants.ts) and returns the fit beside the value the presets carry, with the subset's errors at each, as
 * the text to print (`--json`: one JSON array).
 */

/** Each constant's fit and the errors of its training subset without it, at the presets' value and at the fit. */
function fits() {
  return FITTED_CONSTANTS.map((c) => {
    const fitted = fitGoldenSection(c.residualsAt);
    return {
      name: c.name,
      fittedOn: c.fittedOn,
      preset: c.value,
      fitted,
      errorsAtPresetPct: c.residualsAt(c.value),
      errorsAtFitPct: c.residualsAt(fitted),
      errorsWithoutPct: c.residualsAt(1),
    };
  });
}

const list = (e: number[]) => e.map((x) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}%`).join(' ');

/** The lines of one constant's fit. */
function fitLines(f: ReturnType<typeof fits>[number]): string[] {
  const differs = f.fitted === f.preset ? '' : ' (differs: update src/sim/hardware/sustainedGemm.ts)';
  const rms = Math.sqrt(meanSquaredPct(f.errorsAtFitPct)).toFixed(2);
  return [
    `${f.name}: fit ${f.fitted.toFixed(3)}, presets ${f.preset}${differs}`,
    `  fitted on ${f.fittedOn} (least mean squared relative error)`,
    `  errors without it: ${list(f.errorsWithoutPct)}; at the fit: ${list(f.errorsAtFitPct)} (rms ${rms}%)`,
  ];
}

/** Fits the constants and returns the text to print, ending in a newline. */
export function runFit(options: { json: boolean }): string {
  const all = fits();
  if (options.json) return JSON.stringify(all, null, 2) + '\n';
  return all.flatMap(fitLines).join('\n') + '\n';
}
