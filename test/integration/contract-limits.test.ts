import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, type LocalProcess } from '../../engines/local-process';
import { createLogger } from '../../observability/logger';
import { testNatsServer } from '../support/nats-server';
import { ContractChecker, type OpenApiDoc } from '../support/openapi-check';
import { startTestStack, type RequestOptions, type TestStack } from '../support/test-stack';
import { waitFor } from '../support/wait';

/**
 * The answers the API gives only at its limits or in an outage (413, 429,
 * 503), provoked on a real stack and checked against the OpenAPI document
 * like every other answer: a small body limit, a low record rate, and a
 * nats-server of this file's own that it stops.
 */
const bodyLimit = 64 * 1024;
const flow = { src_ip: '10.0.0.1', dst_ip: '10.0.0.2', bytes: 1, packets: 1, protocol: 'udp' };
const signal = { telemetry: 'bgp', service: 'edge', environment: 'prod', region: 'eu', latency_ms: 5 };
const metric = { service: 'edge', metric: 'latency_ms', value: 1, region: 'eu' };
const ingestion: Array<[string, unknown]> = [['/flow', flow], ['/ingest', signal], ['/v1/ingest/events', metric]];

describe('the API at its limits and in an outage, against its OpenAPI document', () => {
  let dir: string;
  let nats: LocalProcess;
  let t: TestStack;
  let check: ContractChecker;
  let key: string;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-limits-'));
    const port = await freePort();
    nats = testNatsServer(path.join(dir, 'nats'), port, createLogger('silent'));
    await nats.start();
    t = await startTestStack('chdb', {
      ROLES: 'api',
      NATS_URL: `nats://127.0.0.1:${port}`,
      BODY_LIMIT_BYTES: String(bodyLimit),
      RATE_LIMIT_RECORDS_PER_SECOND: '20',
      RATE_LIMIT_BURST_SECONDS: '1',
    });
    check = new ContractChecker((await t.request<OpenApiDoc>('GET', '/v1/openapi.json')).body);
    key = (await t.mintKey({ role: 'operator' })).key;
  });
  afterAll(async () => {
    // The stack's NATS connection is closed cleanly only with a server to close it with.
    await nats?.start();
    await t?.stop();
    await nats?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function answer(method: string, route: string, opts: RequestOptions, status: number): Promise<void> {
    const res = await t.request(method, route, { key, ...opts });
    expect([res.status, check.problems(method, route, res)]).toEqual([status, []]);
  }

  test.each(ingestion)('a body over the limit on %s answers 413 as documented', async (route, record) => {
    const records = Array.from({ length: Math.ceil(bodyLimit / JSON.stringify(record).length) + 10 }, () => record);
    await answer('POST', route, { body: records }, 413);
  });

  test('a JSON body over the limit on a management route answers 413 as documented', async () => {
    await answer('POST', '/v1/policies', { body: { name: 'x'.repeat(bodyLimit + 1), requires_approval: false } }, 413);
  });

  test.each(ingestion)('a batch over the workspace record rate on %s answers 429 with Retry-After as documented', async (route, record) => {
    const batch = { body: Array.from({ length: 40 }, () => record) };
    // A full bucket lets one large batch through, in debt (core/token-bucket): the next is refused.
    await t.request('POST', route, { key, ...batch });
    await answer('POST', route, batch, 429);
  });

  test('with NATS down, every ingestion route and /healthz answer 503 with Retry-After as documented', async () => {
    await nats.stop();
    await waitFor(async () => ((await t.request('POST', '/ingest', { key, body: signal })).status === 503 ? true : undefined), 15_000, 'a 503');
    for (const [route, record] of ingestion) await answer('POST', route, { body: record }, 503);
    await answer('GET', '/healthz', { key: '' }, 503);
  });
});
