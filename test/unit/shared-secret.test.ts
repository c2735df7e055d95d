import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sharedSecretOf } from '../../service/data-folder-secret';

/** A secret every process of a deployment shares (WEBHOOK_SECRETS_KEY, …), resolved at start. */
describe('a shared secret', () => {
  const spec = { setting: 'WEBHOOK_SECRETS_KEY', usedBy: ['api', 'stream-workers'], file: 'webhook-secrets-key' };
  let dataDir: string;
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shared-secret-'));
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  test('on the embedded default, an unset one is generated once into the data folder, readable by its owner only', () => {
    const config = { roles: ['api'], dataDir, clickhouse: {} };
    const first = sharedSecretOf(config, spec);
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(fs.statSync(path.join(dataDir, spec.file)).mode & 0o777).toBe(0o600);
    expect(sharedSecretOf(config, spec)).toBe(first);
  });

  test('with a ClickHouse server, a process that uses it refuses to start without it, naming the setting', () => {
    const config = { roles: ['stream-workers'], dataDir, clickhouse: { url: 'http://clickhouse:8123' } };
    expect(() => sharedSecretOf(config, spec)).toThrow(/WEBHOOK_SECRETS_KEY: required with a ClickHouse server/);
    expect(fs.existsSync(path.join(dataDir, spec.file))).toBe(false);
  });

  test('the one set is the one used', () => {
    const config = { roles: ['api'], dataDir, clickhouse: { url: 'http://clickhouse:8123' } };
    expect(sharedSecretOf(config, { ...spec, given: 'k'.repeat(32) })).toBe('k'.repeat(32));
  });

  test('a process with none of the roles that use it needs none', () => {
    expect(sharedSecretOf({ roles: ['collector'], dataDir, clickhouse: { url: 'http://clickhouse:8123' } }, spec)).toBeUndefined();
  });
});
