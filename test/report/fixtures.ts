import { JSDOM } from 'jsdom';
import { scenarioFromFile } from '../../src/cli/scenarioInput.js';
import { simulateStep, type StepRun } from '../../src/sim/simulateStep.js';
import type { Scenario } from '../../src/scenario/resolve.js';
import type { ScenarioLabel } from '../../src/report/summary.js';

/** The bundled two-node BERT scenario with every rank simulated (full fidelity), once per test file. */
let cached: { scenario: Scenario; run: StepRun; label: ScenarioLabel } | undefined;

export function bertRun(): { scenario: Scenario; run: StepRun; label: ScenarioLabel } {
  if (!cached) {
    const scenario = scenarioFromFile('scenarios/bert-large-ddp-2node.yaml', ['simulation.fidelity=full']);
    const run = simulateStep(scenario);
    cached = {
      scenario,
      run,
      label: {
        name: scenario.name,
        modelName: scenario.model.name,
        clusterName: scenario.cluster.name,
        gpusPerNode: scenario.cluster.node.gpusPerNode,
      },
    };
  }
  return cached;
}

/** Parses an SVG string as XML (throws on malformed markup) and returns its root element. */
export function parseSvg(svg: string): Element {
  const dom = new JSDOM(svg, { contentType: 'image/svg+xml' });
  return dom.window.document.documentElement;
}

/** Number attribute of an element. */
export function num(el: Element, name: string): number {
  return Number(el.getAttribute(name));
}
