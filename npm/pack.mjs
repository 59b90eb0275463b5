#!/usr/bin/env node
// Packs trae-mem for npm: the main package `trae-mem` (a small Node launcher)
// and the platform package holding the binary (`@trae-mem/linux-x64-gnu`, …),
// each stamped with the crate's version, into tarballs that `npm publish`
// or `npm install` take as they are.
//
//   node npm/pack.mjs --out DIR [--binary PATH] [--platform KEY] [--version V]
//
// --binary is an already built trae-mem; without it, `cargo build --release
// --locked` builds one. --platform names the package it goes into
// (npm/platforms/KEY/), by default this machine's. --version stamps another
// version than the crate's (the registry test publishes an update with it).
// A release (.github/workflows/release.yml) runs this once per platform and
// publishes every platform package before the main one.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const { platformKey, binaryName } = require('./trae-mem/lib/platform.js');

const npmDir = path.dirname(fileURLToPath(import.meta.url));
const repo = path.dirname(npmDir);

function usage(message) {
  console.error(`pack.mjs: ${message}\nusage: node npm/pack.mjs --out DIR [--binary PATH] [--platform KEY] [--version V]`);
  process.exit(2);
}

function options(argv) {
  const chosen = { platform: platformKey() };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (!['--out', '--binary', '--platform', '--version'].includes(flag)) usage(`unknown argument ${flag}`);
    if (value === undefined) usage(`${flag} needs a value`);
    chosen[flag.slice(2)] = value;
  }
  if (!chosen.out) usage('--out is required');
  return chosen;
}

/** The crate's version: the one version every package carries. */
function crateVersion() {
  const manifest = fs.readFileSync(path.join(repo, 'Cargo.toml'), 'utf8');
  const inPackage = manifest.split(/^\[/m).find((table) => table.startsWith('package]'));
  const version = inPackage?.match(/^version\s*=\s*"([^"]+)"/m)?.[1];
  if (!version) throw new Error('no version in [package] of Cargo.toml');
  return version;
}

/** Builds the release binary and returns its path, as cargo reports it. */
function buildRelease() {
  const messages = execFileSync('cargo', ['build', '--release', '--locked', '--message-format=json-render-diagnostics'], {
    cwd: repo,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 1 << 28,
  });
  const built = messages
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
    .find((m) => m.reason === 'compiler-artifact' && m.target?.name === 'trae-mem' && m.executable);
  if (!built) throw new Error('cargo built no trae-mem executable');
  return built.executable;
}

/** Copies a package folder's package.json into `dest`, with `version` everywhere it names trae-mem's. */
function stampedManifest(from, dest, version) {
  const manifest = JSON.parse(fs.readFileSync(path.join(from, 'package.json'), 'utf8'));
  manifest.version = version;
  for (const dependency of Object.keys(manifest.optionalDependencies ?? {})) {
    manifest.optionalDependencies[dependency] = version;
  }
  fs.mkdirSync(dest, { recursive: true });
  fs.writeFileSync(path.join(dest, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** Runs `npm pack` in `dir`, into `out`; returns the tarball's path. */
function npmPack(dir, out) {
  const packed = execFileSync('npm', ['pack', '--json', '--pack-destination', out], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return path.join(out, JSON.parse(packed)[0].filename);
}

const chosen = options(process.argv.slice(2));
const version = chosen.version ?? crateVersion();
const out = path.resolve(chosen.out);
const platformDir = path.join(npmDir, 'platforms', chosen.platform);
if (!fs.existsSync(platformDir)) usage(`no platform package ${chosen.platform} in ${path.join(npmDir, 'platforms')}`);
const binary = chosen.binary ? path.resolve(chosen.binary) : buildRelease();

const stage = path.join(out, 'stage');
fs.rmSync(stage, { recursive: true, force: true });

const main = path.join(stage, 'trae-mem');
fs.cpSync(path.join(npmDir, 'trae-mem'), main, { recursive: true });
const { optionalDependencies } = stampedManifest(path.join(npmDir, 'trae-mem'), main, version);
if (!(`@trae-mem/${chosen.platform}` in optionalDependencies)) {
  throw new Error(`npm/trae-mem/package.json does not list @trae-mem/${chosen.platform} in optionalDependencies`);
}

const platform = path.join(stage, chosen.platform);
stampedManifest(platformDir, platform, version);
fs.mkdirSync(path.join(platform, 'bin'));
const packedBinary = path.join(platform, 'bin', binaryName(chosen.platform));
fs.copyFileSync(binary, packedBinary);
fs.chmodSync(packedBinary, 0o755);

for (const dir of [platform, main]) {
  console.log(npmPack(dir, out));
}
fs.rmSync(stage, { recursive: true, force: true });
