// Times the phases of `clustersim plan` in one process (after `npm run build`), printing each phase's end, the
// counts and the best rows: node scripts/plan-phases.mjs <scenario> <gpus> [--set path=value ...]
// e.g. node scripts/plan-phases.mjs scenarios/llama3-405b-16384xh100.yaml 16384
import { loadScenarioFile } from '../dist/scenario/load.js';
import { scenarioWithImports } from '../dist/scenario/importSettings.js';
import { defaultSpace } from '../dist/plan/space.js';
import { planSearch } from '../dist/plan/search.js';

const [file, gpusText, ...rest] = process.argv.slice(2);
if (!file || !gpusText) {
  process.stderr.write('usage: node scripts/plan-phases.mjs <scenario> <gpus> [--set path=value ...]\n');
  process.exit(2);
}
const sets = rest.filter((_, i) => rest[i - 1] === '--set');
const { scenario } = scenarioWithImports(file, {}, sets);
const f = loadScenarioFile(file);
const t0 = Date.now();
const s = () => ((Date.now() - t0) / 1e3).toFixed(1);
const r = await planSearch(
  {
    raw: f.raw,
    source: f.source,
    baseDir: f.baseDir,
    scenario,
    sets,
    gpus: Number(gpusText),
    space: defaultSpace(scenario),
    top: 5,
  },
  { jobs: 2, onProgress: (p) => p.done === p.total && console.log(`${s()} s  ${p.phase} ${p.done}/${p.total}`) },
);
console.log(
  `${s()} s  total: ${r.candidates} candidates, ${r.fitting} fit, ${r.estimated} estimated, ${r.bounded} bounded out`,
);
for (const row of r.rows)
  console.log(
    `  ${row.sim.stepTimeS.toFixed(3)} s  ` +
      `${JSON.stringify(row.candidate.layout)} ${JSON.stringify(row.candidate.knobs)}`,
  );
