#!/usr/bin/env node
import('../dist/cli/main.js').then((m) => m.main(process.argv)).catch((err) => {
  process.stderr.write(`clustersim: ${err && err.message ? err.message : err}\n`);
  process.exitCode = 1;
});
