// Which platform package holds this machine's trae-mem binary. Shared by the
// launcher (bin/trae-mem.js) and the packaging script (npm/pack.mjs), so the
// name a package is packed under is the name it is looked up by.
'use strict';

/**
 * This machine's platform key: <os>-<cpu>, and on Linux <cpu>-gnu. The Linux
 * builds are linked statically (glibc inside, no system library loaded), so
 * the same package serves musl systems such as Alpine (tests/npm.rs).
 */
function platformKey() {
  const { platform, arch } = process;
  return platform === 'linux' ? `linux-${arch}-gnu` : `${platform}-${arch}`;
}

/** The name of the binary inside a platform package's bin/. */
function binaryName(key) {
  return key.startsWith('win32-') ? 'trae-mem.exe' : 'trae-mem';
}

module.exports = { platformKey, binaryName };
