import { randomBytes } from 'node:crypto';
import { startTestStack, type TestStack } from '../support/test-stack';

/** /metrics counts requests by route and workspace: it is the operator's scraper's and the platform admin's only. */
describe('who reads /metrics', () => {
  const metricsToken = randomBytes(32).toString('base64url');
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack('chdb', { ROLES: 'api', METRICS_TOKEN: metricsToken });
  });
  afterAll(() => t.stop());

  test('without a credential, /metrics answers 401 UNAUTHORIZED', async () => {
    const res = await t.request<{ error: { code: string } }>('GET', '/metrics');
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
  });

  test("a workspace's key, even its admin's, is refused with 403 FORBIDDEN", async () => {
    const { key } = await t.mintKey({ role: 'admin' });
    const res = await t.request<{ error: { code: string } }>('GET', '/metrics', { key });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('FORBIDDEN');
  });

  test('a wrong token is a failed authentication: 401', async () => {
    expect((await t.request('GET', '/metrics', { key: randomBytes(32).toString('base64url') })).status).toBe(401);
  });

  test('the scraper token METRICS_TOKEN reads them', async () => {
    const res = await t.request('GET', '/metrics', { key: metricsToken });
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/^# HELP /m);
  });

  test('the platform admin key reads them', async () => {
    expect((await t.request('GET', '/metrics', { key: t.adminKey })).status).toBe(200);
  });
});
