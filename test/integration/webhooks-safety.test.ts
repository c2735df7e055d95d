import { startTestStack, type TestStack } from '../support/test-stack';

/**
 * Outbound safety without the platform setting (no WEBHOOK_ALLOWED_HOSTS):
 * only https, and never an address inside the platform's networks, checked
 * after DNS resolution. (Redirects not followed, and the checks at every
 * delivery: webhooks.test.ts, where loopback is allowed so a receiver can run.)
 */
describe('webhook URLs without the platform setting', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack('chdb', { ROLES: 'api', WEBHOOK_MAX_PER_WORKSPACE: '3', WEBHOOK_TEST_SENDS_PER_MINUTE: '2' });
  });
  afterAll(async () => {
    await t.stop();
  });

  test.each([
    ['http to loopback', 'http://127.0.0.1:8080/hook', /https/],
    ['https to loopback', 'https://127.0.0.1/hook', /does not call/],
    ['a name resolving to loopback', 'https://localhost/hook', /does not call/],
    ['IPv6 loopback', 'https://[::1]/hook', /does not call/],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hook', /does not call/],
    ['a private address', 'https://10.1.2.3/hook', /does not call/],
    ['another private range', 'https://192.168.0.10/hook', /does not call/],
    ['link-local (cloud metadata)', 'https://169.254.169.254/latest/meta-data', /does not call/],
    ['carrier-grade NAT', 'https://100.64.1.1/', /does not call/],
    ['unique-local IPv6', 'https://[fd00::1]/', /does not call/],
    ['an IPv4-compatible IPv6 loopback', 'https://[::7f00:1]/hook', /does not call/],
    ['a 6to4 address carrying a private IPv4', 'https://[2002:a00:1::1]/hook', /does not call/],
    ['a port that is no web port (SSH)', 'https://hooks.example.com:22/', /web port/],
    ['credentials in the URL', 'https://user:pass@hooks.example.com/', /credentials/],
    ['plain http anywhere', 'http://hooks.example.com/', /https/],
  ])('%s is refused with 400', async (_what, url, reason) => {
    const { key } = await t.mintKey({ role: 'operator' });
    const res = await t.request<{ error: { code: string; details: Array<{ path: string; message: string }> } }>('POST', '/v1/webhooks', {
      key,
      body: { url, events: ['incident.opened'] },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details[0]).toMatchObject({ path: 'url', message: expect.stringMatching(reason) as unknown });
    expect((await t.request<{ data: unknown[] }>('GET', '/v1/webhooks', { key })).body.data).toEqual([]);
  });

  test('a change to an internal URL is refused too', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    // An address in documentation space (TEST-NET-3) is public as far as the rules go; nothing is sent at creation.
    const created = await t.request<{ id: string }>('POST', '/v1/webhooks', { key, body: { url: 'https://203.0.113.10/hook', events: ['incident.opened'] } });
    expect(created.status).toBe(201);
    const res = await t.request('PATCH', `/v1/webhooks/${created.body.id}`, { key, body: { url: 'https://10.0.0.1/hook' } });
    expect(res.status).toBe(400);
  });

  test('a workspace holding WEBHOOK_MAX_PER_WORKSPACE webhooks gets 409 for one more, and may create one again once it deleted one', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const create = () => t.request<{ id: string; error?: { code: string; message: string } }>('POST', '/v1/webhooks', { key, body: { url: 'https://203.0.113.10/hook', events: ['incident.opened'] } });
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push((await create()).body.id);
    const refused = await create();
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringMatching(/the most it may have \(3\)/) as unknown });
    expect((await t.request('DELETE', `/v1/webhooks/${ids[0]}`, { key })).status).toBe(200);
    expect((await create()).status).toBe(201);
  });

  test('test sends past WEBHOOK_TEST_SENDS_PER_MINUTE are refused with 429 and Retry-After', async () => {
    const { key } = await t.mintKey({ role: 'operator' });
    const created = await t.request<{ id: string }>('POST', '/v1/webhooks', { key, body: { url: 'https://203.0.113.10/hook', events: ['incident.opened'] } });
    const send = () => t.request<{ error?: { code: string } }>('POST', `/v1/webhooks/${created.body.id}/test`, { key });
    expect([(await send()).status, (await send()).status]).toEqual([202, 202]);
    const refused = await send();
    expect(refused.status).toBe(429);
    expect(refused.body.error?.code).toBe('RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
