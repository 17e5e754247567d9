import { FITTED_CONSTANTS, fitGoldenSection, meanSquaredPct } from './fittedConstants.js';

/**
 * `npm run validate -- --fit`: fits each of the project's fitted constants on its declared training subset
 * (fittedConstants.ts) and prints the fit beside the value the presets carry, with the subset's errors at each.
 */
export function runFit(options: { json: boolean }): void {
  const fits = FITTED_CONSTANTS.map((c) => {
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
  if (options.json) {
    process.stdout.write(JSON.stringify(fits, null, 2) + '\n');
    return;
  }
  const list = (e: number[]) => e.map((x) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}%`).join(' ');
  const lines = fits.flatMap((f) => [
    `${f.name}: fit ${f.fitted.toFixed(3)}, presets ${f.preset}${f.fitted === f.preset ? '' : ' (differs: update src/sim/hardware/sustainedGemm.ts)'}`,
    `  fitted on ${f.fittedOn} (least mean squared relative error)`,
    `  errors without it: ${list(f.errorsWithoutPct)}; at the fit: ${list(f.errorsAtFitPct)} (rms ${Math.sqrt(meanSquaredPct(f.errorsAtFitPct)).toFixed(2)}%)`,
  ]);
  process.stdout.write(lines.join('\n') + '\n');
}
