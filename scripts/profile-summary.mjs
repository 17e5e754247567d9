#!/usr/bin/env node
// Summarises a V8 CPU profile (from `node --cpu-prof --cpu-prof-dir=DIR ...`): the functions with the most
// self time, as a share of all samples, so a bench note can say what bounds a case.
// Usage: node scripts/profile-summary.mjs DIR|FILE.cpuprofile [--top N]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const [target, ...rest] = process.argv.slice(2);
if (!target) {
  process.stderr.write('usage: node scripts/profile-summary.mjs DIR|FILE.cpuprofile [--top N]\n');
  process.exit(2);
}
const topIdx = rest.indexOf('--top');
const top = topIdx >= 0 ? Number(rest[topIdx + 1]) : 15;
const file = statSync(target).isDirectory()
  ? join(
      target,
      readdirSync(target)
        .filter((f) => f.endsWith('.cpuprofile'))
        .sort()
        .pop() ?? '',
    )
  : target;
const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodeById = new Map(profile.nodes.map((n) => [n.id, n]));
const samplesPerNode = new Map();
for (const id of profile.samples) samplesPerNode.set(id, (samplesPerNode.get(id) ?? 0) + 1);
const selfByFunction = new Map();
for (const [id, count] of samplesPerNode) {
  const { functionName, url, lineNumber } = nodeById.get(id).callFrame;
  const where = url ? `${url.split('/').slice(-2).join('/')}:${lineNumber + 1}` : '';
  const key = `${functionName || '(anonymous)'} ${where}`.trim();
  selfByFunction.set(key, (selfByFunction.get(key) ?? 0) + count);
}
const total = profile.samples.length;
const wallS = (profile.endTime - profile.startTime) / 1e6;
process.stdout.write(`${file}: ${total} samples over ${wallS.toFixed(1)} s\n`);
for (const [key, count] of [...selfByFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) {
  process.stdout.write(`${((100 * count) / total).toFixed(1).padStart(5)}%  ${key}\n`);
}
