#!/usr/bin/env node
// npm's `trae-mem` command: runs the native binary of the platform package
// npm installed beside this one (an optional dependency chosen by its os,
// cpu and libc fields; nothing is downloaded at install time), with the
// arguments, stdin, stdout and stderr unchanged, and ends as it ended: the
// same exit code, or the same signal.
//
// Hooks never come this way: `trae-mem install` writes the native binary's
// own path into a client's config (that is the path the binary sees as its
// own), so a hook does not pay for starting Node.
'use strict';

const { spawn } = require('node:child_process');
const path = require('node:path');

const { platformKey, binaryName } = require('../lib/platform.js');

function nativeBinary() {
  const key = platformKey();
  const name = `@trae-mem/${key}`;
  try {
    return path.join(path.dirname(require.resolve(`${name}/package.json`)), 'bin', binaryName(key));
  } catch {
    console.error(
      `trae-mem: the package ${name} is not installed, so there is no trae-mem binary for this platform. ` +
        'Reinstall without --omit=optional (npm install -g trae-mem), or build trae-mem from source ' +
        '(cargo install --path . --locked, in a clone of its repository).',
    );
    process.exit(1);
  }
}

const child = spawn(nativeBinary(), process.argv.slice(2), { stdio: 'inherit' });

// A signal meant for trae-mem (a client's timeout, a `kill`) reaches this
// process, not the binary: pass it on, and let the binary decide. (Not
// SIGUSR1, which Node keeps for its debugger.)
const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
for (const signal of forwarded) {
  process.on(signal, () => child.kill(signal));
}

child.on('error', (err) => {
  console.error(`trae-mem: cannot run ${child.spawnfile}: ${err.message}`);
  process.exit(1);
});

child.on('exit', (code, signal) => {
  if (signal) {
    // Die of the same signal, so that the caller sees what the binary did.
    for (const forwardedSignal of forwarded) process.removeAllListeners(forwardedSignal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code);
});
