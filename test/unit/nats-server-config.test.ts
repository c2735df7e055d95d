import fs from 'node:fs';
import path from 'node:path';
import { natsServerBinaryName } from '../../engines/binaries';
import { natsConfigText, natsMaxPayload, natsMaxPendingBytes } from '../../engines/engines';

const base = { dir: '/data/nats', port: 14222, maxFileStoreBytes: 20 * 1024 ** 3 };
/** The body of the config's `jetstream { … }` block. */
const jetstreamBlock = (text: string) => /jetstream \{\n([^}]*)\}/.exec(text)?.[1] ?? '';

describe('the embedded nats-server', () => {
  test('the binary the service looks for is the one the set-up builds, version 2.15.2', () => {
    // The set-up is plain ESM that jest does not load: its declaration is read as text.
    const setup = fs.readFileSync(path.resolve(__dirname, '../../scripts/setup.mjs'), 'utf8');
    const version = /natsServerVersion = '([^']+)'/.exec(setup)?.[1];
    expect(version).toBe('v2.15.2');
    expect(natsServerBinaryName).toBe(`nats-server-${version}`);
  });

  test('its JetStream syncs every write to disk before acknowledging it', () => {
    expect(jetstreamBlock(natsConfigText(base))).toMatch(/^ {2}sync_interval: always$/m);
  });

  test('its JetStream file store is bounded by the configured size', () => {
    expect(jetstreamBlock(natsConfigText(base))).toMatch(new RegExp(`^ {2}max_file_store: ${20 * 1024 ** 3}$`, 'm'));
  });

  test('a client the server cannot write to is cut after a minute, not after the default 10 s', () => {
    expect(natsConfigText(base)).toMatch(/^write_deadline: "60s"$/m);
  });

  test('its payload limit is within the 8 MB NATS recommends', () => {
    expect(natsConfigText(base)).toMatch(new RegExp(`^max_payload: ${natsMaxPayload}$`, 'm'));
    expect(natsConfigText(base)).toMatch(new RegExp(`^max_pending: ${natsMaxPendingBytes}$`, 'm'));
    expect(natsMaxPayload).toBeLessThanOrEqual(8 * 1024 * 1024);
  });

  test('it listens on loopback only and stores under its data folder', () => {
    const text = natsConfigText(base);
    expect(text).toMatch(/^listen: "127\.0\.0\.1:14222"$/m);
    expect(jetstreamBlock(text)).toMatch(/^ {2}store_dir: "\/data\/nats\/store"$/m);
  });

  test('given a user, it takes only clients that authenticate as that user', () => {
    const text = natsConfigText({ ...base, auth: { user: 'nettel', password: 'pa"ss\\word' } });
    expect(/^authorization \{\n([^}]*)\}$/m.exec(text)?.[1]).toBe('  user: "nettel"\n  password: "pa\\"ss\\\\word"\n');
  });

  test('without a user (the tests\' own servers), it has no authorization block', () => {
    expect(natsConfigText(base)).not.toMatch(/authorization/);
  });

  test('the interval variant the bench compares with leaves syncing to the server', () => {
    expect(natsConfigText({ ...base, sync: 'interval' })).not.toMatch(/sync_interval/);
  });
});
