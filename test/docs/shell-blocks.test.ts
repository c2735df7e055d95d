import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../engines/local-process';
import { ServiceProcess } from '../support/chaos/service-process';
import { headingAnchors, markdownFiles, relativeLinks, shellBlocks, type ShellBlock } from '../support/markdown';

/**
 * Every ```sh and ```bash block of README.md and docs/**, run as written
 * against a fresh service started as `npm start` starts it (the built
 * dist/service/main.js, every role, its own data folder and free ports). The
 * blocks of one page run in order in one bash with `set -euo pipefail`, from
 * the repository's root; README.md runs first. The environment they rely on
 * (docs/internals/tests.md, "The docs' shell blocks"): NETTEL_URL, DATA_DIR
 * and the collector's ports for every page; ADMIN_KEY and KEY, an operator
 * key of a workspace of the page's own, for every page but the README, whose
 * walk-through sets them itself. A block preceded by `<!-- not-run: reason -->`
 * is counted and left out.
 */
const root = path.resolve(__dirname, '../..');
const pages = [path.join(root, 'README.md'), ...markdownFiles(path.join(root, 'docs'))];
const rel = (file: string) => path.relative(root, file);

/**
 * Pages left out whole, with why: each waits for its owner to mark its blocks
 * or make them run as written. Keep it short, and empty when it can be.
 */
const pagesLeftOut: Record<string, string> = {};

/** A page's blocks may take this long in all (they wait on the workers and on replays). */
const pageTimeoutMs = 90_000;

let service: ServiceProcess;
let dataDir: string;
let collectorPorts: { netflow: string; sflow: string };
const ran: string[] = [];
const skipped: string[] = [];

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-docs-'));
  collectorPorts = { netflow: String(await freePort()), sflow: String(await freePort()) };
  // No ADMIN_API_KEY: the start generates one into the data folder, as a first `npm start` does.
  service = new ServiceProcess(dataDir, '', {
    ROLES: 'api,stream-workers,temporal-worker,collector',
    COLLECTOR_NETFLOW_PORT: collectorPorts.netflow,
    COLLECTOR_SFLOW_PORT: collectorPorts.sflow,
    WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
  });
  await service.start();
}, 150_000);

afterAll(async () => {
  await service?.stop();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  console.log(`docs shell blocks: ${ran.length} ran, ${skipped.length} not run\n${[...ran.map((b) => `  ran      ${b}`), ...skipped].join('\n')}`);
});

/** An operator key of a new workspace, minted with the platform admin key. */
async function workspaceKey(adminKey: string): Promise<string> {
  const res = await fetch(`${service.url}/v1/api-keys`, { method: 'POST', headers: { authorization: `Bearer ${adminKey}` } });
  if (res.status !== 201) throw new Error(`minting a key answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { key: string }).key;
}

/** The page's blocks in one bash script; each block's place is echoed to `ranFile` once it ends. */
function script(blocks: ShellBlock[], ranFile: string): string {
  const parts = blocks.map((b) => `# ${rel(b.file)}:${b.line}\n${b.text}\necho '${rel(b.file)}:${b.line}' >> '${ranFile}'\n`);
  return ['set -euo pipefail', `cd '${root}'`, ...parts].join('\n');
}

async function runPage(blocks: ShellBlock[], env: Record<string, string>): Promise<string[]> {
  const ranFile = path.join(dataDir, `ran-${path.basename(blocks[0]!.file)}-${blocks[0]!.line}.txt`);
  fs.writeFileSync(ranFile, '');
  const child = spawn('bash', ['-c', script(blocks, ranFile)], { env, stdio: ['ignore', 'pipe', 'pipe'], timeout: pageTimeoutMs });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const done = fs.readFileSync(ranFile, 'utf8').split('\n').filter(Boolean);
  if (code !== 0) {
    const failed = blocks[done.length]!;
    throw new Error(`${rel(failed.file)}:${failed.line} exited ${code ?? 'on a timeout'}; the page's output ends:\n${output.slice(-3000)}`);
  }
  return done;
}

function environment(extra: Record<string, string>): Record<string, string> {
  const env = { ...(process.env as Record<string, string>) };
  for (const name of ['NETTEL_URL', 'ADMIN_KEY', 'KEY', 'DATA_DIR']) delete env[name];
  return {
    ...env,
    NETTEL_URL: service.url,
    DATA_DIR: dataDir,
    COLLECTOR_NETFLOW_PORT: collectorPorts.netflow,
    COLLECTOR_SFLOW_PORT: collectorPorts.sflow,
    ...extra,
  };
}

describe('the docs shell blocks', () => {
  test.each(pages.map((p) => [rel(p)]))('%s: every shell block runs as written against a fresh service', async (page) => {
    if (pagesLeftOut[page]) {
      skipped.push(`  page     ${page}: ${pagesLeftOut[page]}`);
      return;
    }
    const blocks = shellBlocks(path.join(root, page));
    for (const b of blocks.filter((x) => x.notRun)) skipped.push(`  not run  ${rel(b.file)}:${b.line}: ${b.notRun}`);
    const runnable = blocks.filter((b) => !b.notRun);
    if (!runnable.length) return;
    const extra: Record<string, string> = {};
    if (page !== 'README.md') {
      extra.ADMIN_KEY = fs.readFileSync(path.join(dataDir, 'admin-api-key'), 'utf8').trim();
      extra.KEY = await workspaceKey(extra.ADMIN_KEY);
    }
    const done = await runPage(runnable, environment(extra));
    ran.push(...done);
    expect(done).toHaveLength(runnable.length);
  }, pageTimeoutMs + 10_000);

  test('the walk-through of the README ran, and every page left out still exists', () => {
    expect(ran.filter((b) => b.startsWith('README.md:')).length).toBeGreaterThanOrEqual(5);
    expect(Object.keys(pagesLeftOut).filter((p) => !fs.existsSync(path.join(root, p)))).toEqual([]);
  });
});

describe('the docs links', () => {
  test('every relative link of README.md, BENCHMARKS.md, docs/ and bench/results/ names a file that exists, and a heading of it', () => {
    const files = [...pages, path.join(root, 'BENCHMARKS.md'), ...markdownFiles(path.join(root, 'bench/results'))];
    const broken = files.flatMap(relativeLinks).flatMap((link) => {
      const where = `${rel(link.file)}:${link.line} → ${rel(link.target)}${link.anchor ? `#${link.anchor}` : ''}`;
      if (!fs.existsSync(link.target)) return [`${where}: no such file`];
      if (link.anchor && link.target.endsWith('.md') && !headingAnchors(fs.readFileSync(link.target, 'utf8')).has(link.anchor)) return [`${where}: no such heading`];
      return [];
    });
    expect(broken).toEqual([]);
  });
});
