import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, type LocalProcess } from '../../engines/local-process';
import { loadConfig } from '../../service/config';
import { createLogger } from '../../observability/logger';
import type { ErrorBody, FlowView, HealthView, Page } from '../support/api-types';
import { localClickHouseServer } from '../../engines/clickhouse-server';
import { testNatsServer } from '../support/nats-server';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor } from '../support/wait';

/** `expect.any(String)`, typed as what it is to the compiler: a value to compare with. */
const anyString = (): unknown => expect.any(String);

const flow = { src_ip: '192.0.2.10', dst_ip: '192.0.2.20', bytes: 64, packets: 1, protocol: 'icmp' };

/** Engines of this file's own, so that stopping them disturbs no other test. */
describe('an engine outage', () => {
  let dir: string;
  let nats: LocalProcess;
  let clickhouse: LocalProcess;
  let t: TestStack;
  let key: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-outage-'));
    const config = loadConfig(process.env);
    const log = createLogger('silent');
    const [natsPort, chPort, chTcp] = await Promise.all([freePort(), freePort(), freePort()]);
    nats = testNatsServer(path.join(dir, 'nats'), natsPort, log);
    clickhouse = localClickHouseServer({ dir: path.join(dir, 'ch'), port: chPort, tcpPort: chTcp, binPath: config.binPath }, log);
    await Promise.all([nats.start(), clickhouse.start()]);
    t = await startTestStack('clickhouse-server', {
      NATS_URL: `nats://127.0.0.1:${natsPort}`,
      CLICKHOUSE_URL: `http://127.0.0.1:${chPort}`,
      WORKER_MAX_WAIT_MS: '20',
    });
    key = (await t.mintKey({ role: 'operator' })).key;
  });
  afterAll(async () => {
    await t.stop();
    await Promise.all([nats.stop(), clickhouse.stop()]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('with NATS down, ingestion answers 503 UNAVAILABLE with Retry-After and healthz reports nats down', async () => {
    await nats.stop();
    const res = await waitFor(async () => {
      const r = await t.request<ErrorBody>('POST', '/flow', { key, body: flow });
      return r.status === 503 ? r : undefined;
    }, 10_000, '503');
    expect(res.body).toEqual({ error: { code: 'UNAVAILABLE', message: anyString() } });
    expect(res.headers.get('retry-after')).toBe('2');
    const health = await t.request<HealthView>('GET', '/healthz');
    expect(health.status).toBe(503);
    expect(health.body.engines.nats.status).toBe('down');
  });

  test('once NATS is back, ingestion resumes and the data reaches ClickHouse', async () => {
    await nats.start();
    const res = await waitFor(async () => {
      const r = await t.request('POST', '/flow', { key, body: flow });
      return r.status === 201 ? r : undefined;
    }, 20_000, 'ingestion to resume');
    expect(res.text).toBe('Flow saved');
    const flows = await waitFor(async () => {
      const r = await t.request<Page<FlowView>>('GET', '/v1/telemetry/flows', { key });
      return r.body.data.length ? r.body.data : undefined;
    }, 20_000, 'the flow in ClickHouse');
    expect(flows).toHaveLength(1);
  });

  test('with ClickHouse down, reads answer 503 and accepted telemetry waits in JetStream until it is back', async () => {
    await clickhouse.stop();
    const read = await t.request<ErrorBody>('GET', '/v1/incidents', { key });
    expect(read.status).toBe(503);
    expect(read.body.error.code).toBe('UNAVAILABLE');
    const posted = await t.request('POST', '/flow', { key, body: { ...flow, dst_ip: '192.0.2.30' } });
    expect(posted.status).toBe(201);
    await clickhouse.start();
    const flows = await waitFor(async () => {
      const r = await t.request<Page<FlowView>>('GET', '/v1/telemetry/flows', { key });
      return r.status === 200 && r.body.data.length === 2 ? r.body.data : undefined;
    }, 30_000, 'the flow accepted during the outage');
    expect(flows.map((f: { dst_ip: string }) => f.dst_ip).sort()).toEqual(['192.0.2.20', '192.0.2.30']);
  });

  test('with ClickHouse down, healthz with a workspace key it cannot look up still answers, saying ClickHouse is down', async () => {
    const unseen = (await t.mintKey({ role: 'operator' })).key;
    await clickhouse.stop();
    try {
      const health = await t.request<HealthView>('GET', '/healthz', { key: unseen });
      expect(health.status).toBe(503);
      expect(health.body.engines.clickhouse).toEqual({ status: 'down' });
    } finally {
      await clickhouse.start();
    }
  });
});
