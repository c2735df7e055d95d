import { Writable } from 'node:stream';
import { createLogger, withoutUrlCredentials } from '../../observability/logger';

/** A logger writing into an array of parsed lines. */
function capture(): { log: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { log: createLogger('info', 'test', sink), lines };
}

describe('log lines carry no secrets', () => {
  test('a URL with a user and password is logged with its password redacted, the rest kept', () => {
    const { log, lines } = capture();
    log.info({ url: 'nats://api:s3cr3t-pw@nats-1:4222,nats://api:s3cr3t-pw@nats-2:4222' }, 'nats connected');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('s3cr3t-pw');
    expect((JSON.parse(lines[0]!) as { url: string }).url).toBe('nats://api:[redacted]@nats-1:4222,nats://api:[redacted]@nats-2:4222');
  });

  test('a URL carrying a token is logged without it, in a message or an error as much as in a field', () => {
    const { log, lines } = capture();
    log.warn({ err: new Error('unable to reach https://tok_9f8e7d@clickhouse:8443/') }, 'engine down: nats://tok_9f8e7d@127.0.0.1:4222');
    expect(lines[0]).not.toContain('tok_9f8e7d');
    const line = JSON.parse(lines[0]!) as { msg: string; err: { message: string } };
    expect(line.msg).toBe('engine down: nats://[redacted]@127.0.0.1:4222');
    expect(line.err.message).toBe('unable to reach https://[redacted]@clickhouse:8443/');
  });

  test('fields named like secrets are redacted at the top of a line and one level down', () => {
    const { log, lines } = capture();
    log.info({ password: 'pw-1', token: 'tk-1', apiKey: 'ak-1', nats: { user: 'api', password: 'pw-2', token: 'tk-2' }, temporal: { apiKey: 'ak-2' } }, 'settings');
    const text = lines[0]!;
    for (const secret of ['pw-1', 'tk-1', 'ak-1', 'pw-2', 'tk-2', 'ak-2']) expect(text).not.toContain(secret);
    expect((JSON.parse(text) as { nats: unknown }).nats).toEqual({ user: 'api', password: '[redacted]', token: '[redacted]' });
  });

  test('text without credentials is left as it is', () => {
    const plain = '{"url":"nats://127.0.0.1:4222","mail":"ops@example.com","msg":"a@b"}';
    expect(withoutUrlCredentials(plain)).toBe(plain);
  });
});
