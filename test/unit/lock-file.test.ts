import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = path.resolve(__dirname, '../..');

/**
 * `npm ci` refuses a lock file that lacks an optional dependency of the
 * platform it runs on. The set-up runs `npm ci`, so the lock must hold every
 * platform's native binaries (chDB's, swc's, rolldown's, …), not only this
 * machine's: checked by npm itself, for each platform, without installing.
 */
describe('the lock file', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lock-file-'));
    for (const f of ['package.json', 'package-lock.json']) fs.copyFileSync(path.join(root, f), path.join(dir, f));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test.each([
    ['linux', 'x64'],
    ['linux', 'arm64'],
    ['darwin', 'arm64'],
    ['darwin', 'x64'],
    ['win32', 'x64'],
  ])('npm ci accepts it on %s %s', async (platform, cpu) => {
    const args = ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund', `--os=${platform}`, `--cpu=${cpu}`];
    await expect(run('npm', args, { cwd: dir, maxBuffer: 16 * 1024 * 1024 })).resolves.toBeDefined();
  }, 120_000);
});
