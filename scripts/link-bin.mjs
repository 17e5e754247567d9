// After `npm ci` in a checkout: puts this package's own command in node_modules/.bin, where `npx clustersim` looks
// first. Without it npx installs the checkout into its cache (building it again, about 20 s) on first use.
import { existsSync, lstatSync, mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const binDir = join(root, 'node_modules', '.bin');
const link = join(binDir, 'clustersim');
const exists = (p) => {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
};
if (existsSync(join(root, 'node_modules')) && !exists(link)) {
  mkdirSync(binDir, { recursive: true });
  symlinkSync(join('..', '..', 'bin', 'clustersim.js'), link);
}
