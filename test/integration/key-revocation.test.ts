import { Registry } from 'prom-client';
import { AuditLedger } from '../../application/audit-ledger';
import { KeysService } from '../../application/keys-service';
import { createLogger } from '../../observability/logger';
import { AuditRepo } from '../../storage/audit-repo';
import { HttpClickHouse } from '../../storage/clickhouse';
import { KeysRepo } from '../../storage/keys-repo';
import { AuditHeads } from '../../streams/audit-heads';
import { KeyRevocations } from '../../streams/key-revocations';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor } from '../support/wait';

/**
 * An API process serves a key it cached while ClickHouse cannot be reached
 * (ingestion goes on through a ClickHouse outage). A key another process
 * revokes meanwhile must stop working there at once, not when the cache
 * gives up. The second process reaches the real ClickHouse server through a
 * proxy the test takes down: a real network outage.
 */
describe('a key revoked while another API process cannot reach ClickHouse', () => {
  let t: TestStack;
  let proxy: TcpProxy;
  let clickhouse: HttpClickHouse;
  let heads: AuditHeads;
  let revocations: KeyRevocations;
  let keys: KeysService;
  let clock = Date.now();

  beforeAll(async () => {
    t = await startTestStack('clickhouse-server', { ROLES: 'api' });
    const server = new URL(t.stack.config.clickhouse.url!);
    proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port) });
    clickhouse = new HttpClickHouse({ url: `http://127.0.0.1:${proxy.port}`, user: 'default', password: '', database: t.stack.clickhouse.database });
    await clickhouse.start();
    const { nats, config } = t.stack;
    heads = new AuditHeads(nats, config.nats.prefix, config.nats.replicas);
    await heads.start();
    const registry = new Registry();
    const audit = new AuditLedger(new AuditRepo(clickhouse), heads, registry, config.audit.chainKey);
    keys = new KeysService({ repo: new KeysRepo(clickhouse), audit, registry, now: () => clock });
    revocations = new KeyRevocations({ nats, prefix: config.nats.prefix, log: createLogger('silent'), onRevoked: (keyId) => keys.revokedElsewhere(keyId) });
    await revocations.start();
  });
  afterAll(async () => {
    await revocations?.stop();
    await heads?.stop();
    await proxy?.down();
    await clickhouse?.stop();
    await t?.stop();
  });

  test('is refused there as soon as it is revoked, while a key not revoked is still served from the cache', async () => {
    const [revoked, kept] = [await t.mintKey({ role: 'operator' }), await t.mintKey({ role: 'operator' })];
    for (const k of [revoked, kept]) await expect(keys.authenticate(`Bearer ${k.key}`)).resolves.toMatchObject({ keyId: k.key_id });
    await proxy.down();
    // Past the cache's few seconds: each lookup now fails on the network and falls back to the cached record.
    clock += 60_000;
    await expect(keys.authenticate(`Bearer ${revoked.key}`)).resolves.toMatchObject({ keyId: revoked.key_id });
    expect((await t.request('DELETE', `/v1/api-keys/${revoked.key_id}`, { key: t.adminKey })).status).toBe(200);
    await waitFor(
      () => keys.authenticate(`Bearer ${revoked.key}`).then(() => undefined, (err: Error) => err),
      5_000,
      'the revoked key refused',
    );
    await expect(keys.authenticate(`Bearer ${revoked.key}`)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(keys.authenticate(`Bearer ${kept.key}`)).resolves.toMatchObject({ keyId: kept.key_id });
  });
});
