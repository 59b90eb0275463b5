// Which platform package holds this machine's trae-mem binary. Shared by the
// launcher (bin/trae-mem.js) and the packaging script (npm/pack.mjs), so the
// name a package is packed under is the name it is looked up by.
'use strict';

/** This machine's platform key: <os>-<cpu>, and on Linux -gnu or -musl. */
function platformKey() {
  const { platform, arch } = process;
  if (platform !== 'linux') return `${platform}-${arch}`;
  // Node reports the glibc version it runs on; on musl there is none.
  const glibc = process.report?.getReport?.().header?.glibcVersionRuntime;
  return `linux-${arch}-${glibc ? 'gnu' : 'musl'}`;
}

/** The name of the binary inside a platform package's bin/. */
function binaryName(key) {
  return key.startsWith('win32-') ? 'trae-mem.exe' : 'trae-mem';
}

module.exports = { platformKey, binaryName };
