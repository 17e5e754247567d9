#!/usr/bin/env node
// Builds the native addon (native/build/Release/clustersim_native.node) with node-gyp, which npm bundles.
// Run by `npm ci` / `npm install` (the package's install script) and by `npm run build:native`.
//
// - Offline: when this Node installation ships its headers (include/node/common.gypi next to bin/node, as
//   official builds and distribution packages do), node-gyp is pointed at them with --nodedir instead of
//   downloading them.
// - No CUDA is needed: the CUDA libraries are opened with dlopen at run time.
// - Without a compiler the install still succeeds (the simulator needs no addon); `calibrate` and `validate`
//   then say how to build it. `--strict` (or CLUSTERSIM_REQUIRE_NATIVE=1) makes a failed build fail.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const nativeDir = dirname(fileURLToPath(import.meta.url));
const strict = process.argv.includes('--strict') || process.env.CLUSTERSIM_REQUIRE_NATIVE === '1';

if (process.env.CLUSTERSIM_SKIP_NATIVE === '1') {
  console.log('clustersim: CLUSTERSIM_SKIP_NATIVE=1, not building the native addon');
  process.exit(0);
}

// An addon already built for this Node ABI from the sources as they are is not built again (a second `npm ci`, or npx
// installing this checkout into its cache, would otherwise spend some 12 s on it). `--force` builds anyway, as
// `npm run build:native` does (the fix for an addon that does not load).
const addon = join(nativeDir, 'build', 'Release', 'clustersim_native.node');
const stamp = join(nativeDir, 'build', 'Release', 'clustersim-abi.txt');
// What an addon is built for: the Node ABI, the platform and the architecture.
const buildKey = `${process.versions.modules} ${process.platform} ${process.arch}`;
const newestSourceMs = () => {
  const files = [
    join(nativeDir, 'binding.gyp'),
    join(nativeDir, 'build.mjs'),
    ...readdirSync(join(nativeDir, 'src')).map((f) => join(nativeDir, 'src', f)),
  ];
  return Math.max(...files.map((f) => statSync(f).mtimeMs));
};
const upToDate = () =>
  existsSync(addon) &&
  existsSync(stamp) &&
  readFileSync(stamp, 'utf8').trim() === buildKey &&
  statSync(addon).mtimeMs >= newestSourceMs();
if (!process.argv.includes('--force') && upToDate()) {
  console.log(`clustersim: native addon up to date in ${join(nativeDir, 'build', 'Release')} (--force rebuilds it)`);
  process.exit(0);
}

/** node-gyp's entry script: npm's own (set in lifecycle scripts), else the one next to this Node's npm. */
function findNodeGyp() {
  const prefix = resolve(dirname(process.execPath), '..');
  const candidates = [
    process.env.npm_config_node_gyp,
    join(prefix, 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    join(prefix, 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  return candidates.find((c) => c && existsSync(c));
}

const gyp = findNodeGyp();
const args = ['rebuild', '--directory', nativeDir];
const prefix = resolve(dirname(process.execPath), '..');
if (!process.env.npm_config_nodedir && existsSync(join(prefix, 'include', 'node', 'common.gypi'))) {
  args.push(`--nodedir=${prefix}`);
}
const result = gyp
  ? spawnSync(process.execPath, [gyp, ...args], { stdio: 'inherit' })
  : spawnSync('node-gyp', args, { stdio: 'inherit', shell: process.platform === 'win32' });

if (result.status === 0) {
  writeFileSync(stamp, `${buildKey}\n`);
  console.log(`clustersim: native addon built in ${join(nativeDir, 'build', 'Release')}`);
  process.exit(0);
}
const why = result.error ? result.error.message : `node-gyp exited with status ${result.status}`;
console.error(
  `clustersim: the native addon (calibrate/validate) was not built: ${why}.\n` +
    '  It needs python3, make and a C++17 compiler (no CUDA). The simulator works without it.\n' +
    '  Fix the toolchain, then run `npm run build:native`.',
);
process.exit(strict ? 1 : 0);
