// The CLI calls that make the example reports under reports/ (`npm run reports` runs them; a test re-runs the scaling
// ones to check the committed CSVs are current). Each job is one CLI call's arguments.
export const OUT = 'reports';
const BERT = 'scenarios/bert-large-ddp-2node.yaml';
const LLAMA = 'scenarios/llama2-7b-ddp-16node.yaml';
const LLAMA_ROCE = 'reports/inputs/llama2-7b-ddp-16node-roce100.yaml';

export const REPORT_JOBS = [
  // Every rank simulated (by default one data-parallel replica stands for all), to show both nodes.
  [
    'simulate',
    BERT,
    '--set',
    'simulation.fidelity=full',
    '--timeline',
    `${OUT}/bert-large-ddp-2node.timeline.svg`,
    '--memory-chart',
    `${OUT}/bert-large-ddp-2node.memory.svg`,
    '--report',
    `${OUT}/bert-large-ddp-2node.html`,
    '--trace',
    `${OUT}/bert-large-ddp-2node.trace.json`,
    '--ranks',
    '0,8',
  ],
  [
    'simulate',
    LLAMA,
    '--timeline',
    `${OUT}/llama2-7b-ddp-16node.timeline.svg`,
    '--memory-chart',
    `${OUT}/llama2-7b-ddp-16node.memory.svg`,
    '--report',
    `${OUT}/llama2-7b-ddp-16node.html`,
  ],
  [
    'scale',
    BERT,
    '--gpus',
    '1..32',
    '--mode',
    'strong',
    '--svg',
    `${OUT}/scale-bert-large-strong.svg`,
    '--csv',
    `${OUT}/scale-bert-large-strong.csv`,
  ],
  [
    'scale',
    LLAMA,
    '--compare',
    LLAMA_ROCE,
    '--gpus',
    '8..1024',
    '--mode',
    'weak',
    '--svg',
    `${OUT}/scale-llama2-7b-ib-vs-roce-weak.svg`,
    '--csv',
    `${OUT}/scale-llama2-7b-ib-vs-roce-weak.csv`,
    '--report',
    `${OUT}/scale-llama2-7b-ib-vs-roce-weak.html`,
  ],
];
