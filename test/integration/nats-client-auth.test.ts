import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { connect, nkeys } from 'nats';
import { natsServerBinaryName, requireExecutable } from '../../engines/binaries';
import { LocalProcess, freePort } from '../../engines/local-process';
import { createLogger } from '../../observability/logger';
import { loadConfig } from '../../service/config';
import { NatsClient, type NatsClientConfig } from '../../streams/nats-client';

/**
 * The service's NATS client against real nats-servers that each take one way
 * of authenticating (user and password, token, NKey, creds file from an
 * operator's JWTs) or mutual TLS: it connects and reaches JetStream with the
 * right credentials and is refused without them.
 */
interface KeyPair {
  getPublicKey(): string;
  getSeed(): Uint8Array;
  sign(data: Uint8Array): Uint8Array;
}
const keys = nkeys as { createOperator(): KeyPair; createAccount(): KeyPair; createUser(): KeyPair };

const log = createLogger('silent');
let root: string;
const servers: LocalProcess[] = [];

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-nats-auth-'));
});
afterAll(async () => {
  for (const server of servers) await server.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

/** A nats-server with JetStream on loopback, with these extra lines of config. */
async function natsServerWith(name: string, settings: string): Promise<number> {
  const config = loadConfig(process.env);
  const command = config.nats.server ?? requireExecutable(natsServerBinaryName, [config.toolsDir, ...config.binPath], 'run the set-up');
  const dir = path.join(root, name);
  fs.mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const file = path.join(dir, 'nats.conf');
  fs.writeFileSync(file, `listen: "127.0.0.1:${port}"\njetstream { store_dir: "${path.join(dir, 'store')}", max_file_store: 1GB }\n${settings}\n`);
  const server = new LocalProcess({ name: 'nats-server', command, args: ['-c', file], dir, port }, log);
  servers.push(server);
  await server.start();
  return port;
}

/** Connects the service's client and asks JetStream for its account: what a start does. */
async function outcome(config: Omit<NatsClientConfig, 'name'>, logger = log): Promise<string> {
  const client = new NatsClient({ ...config, name: 'auth-test' }, logger);
  try {
    await client.start();
    const { version } = await client.probe();
    return `jetstream ${version.includes('jetstream') ? 'reached' : 'missing'}`;
  } catch (err) {
    return String((err as { cause?: { code?: string } }).cause?.code ?? err);
  } finally {
    await client.stop().catch(() => undefined);
  }
}

const base64url = (data: string | Uint8Array) => Buffer.from(data).toString('base64url');

/** A NATS JWT (ed25519-nkey) with these claims, signed by `issuer`. */
function natsJwt(issuer: KeyPair, subject: string, name: string, nats: Record<string, unknown>): string {
  const header = base64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }));
  const claims = { iat: Math.floor(Date.now() / 1000), iss: issuer.getPublicKey(), name, sub: subject, nats: { version: 2, ...nats } };
  const jti = createHash('sha256').update(JSON.stringify(claims)).digest('base64url');
  const body = base64url(JSON.stringify({ jti, ...claims }));
  const signature = base64url(issuer.sign(new TextEncoder().encode(`${header}.${body}`)));
  return `${header}.${body}.${signature}`;
}

test('a user and password are sent, and a client without them is refused', async () => {
  const port = await natsServerWith('user', 'authorization { user: "api", password: "pw-8f2c" }');
  const url = `nats://127.0.0.1:${port}`;
  expect(await outcome({ url, auth: { user: 'api', password: 'pw-8f2c' } })).toBe('jetstream reached');
  expect(await outcome({ url })).toBe('AUTHORIZATION_VIOLATION');
});

test('credentials given in NATS_URL are used, never left in the URL the client logs', async () => {
  const port = await natsServerWith('url', 'authorization { user: "api", password: "pw-77d1" }');
  const config = loadConfig({ NATS_URL: `nats://api:pw-77d1@127.0.0.1:${port}` }).nats;
  expect(config.url).toBe(`nats://127.0.0.1:${port}`);
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  expect(await outcome({ url: config.url!, auth: config.auth }, createLogger('info', 'test', sink))).toBe('jetstream reached');
  expect(lines.find((l) => l.includes('nats connected'))).toContain(`"url":"nats://127.0.0.1:${port}"`);
  expect(lines.join('')).not.toContain('pw-77d1');
});

test('a token is sent, and a wrong one is refused', async () => {
  const port = await natsServerWith('token', 'authorization { token: "tok-5e1a" }');
  const url = `nats://127.0.0.1:${port}`;
  expect(await outcome({ url, auth: { token: 'tok-5e1a' } })).toBe('jetstream reached');
  expect(await outcome({ url, auth: { token: 'tok-wrong' } })).toBe('AUTHORIZATION_VIOLATION');
});

test('an NKey seed file signs the server nonce, and another key is refused', async () => {
  const user = keys.createUser();
  const port = await natsServerWith('nkey', `authorization { users: [ { nkey: "${user.getPublicKey()}" } ] }`);
  const seedFile = path.join(root, 'user.nk');
  fs.writeFileSync(seedFile, `${new TextDecoder().decode(user.getSeed())}\n`, { mode: 0o600 });
  const otherFile = path.join(root, 'other.nk');
  fs.writeFileSync(otherFile, new TextDecoder().decode(keys.createUser().getSeed()), { mode: 0o600 });
  const url = `nats://127.0.0.1:${port}`;
  expect(await outcome({ url, auth: { nkeySeedFile: seedFile } })).toBe('jetstream reached');
  expect(await outcome({ url, auth: { nkeySeedFile: otherFile } })).toBe('AUTHORIZATION_VIOLATION');
});

test('a creds file (a user JWT and its seed) of an operator-mode server is accepted', async () => {
  const [operator, system, account, user] = [keys.createOperator(), keys.createAccount(), keys.createAccount(), keys.createUser()];
  const unlimited = { subs: -1, data: -1, payload: -1, imports: -1, exports: -1, wildcards: true, conn: -1, leaf: -1 };
  const jetstream = { mem_storage: -1, disk_storage: -1, streams: -1, consumer: -1 };
  const operatorJwt = natsJwt(operator, operator.getPublicKey(), 'op', { type: 'operator' });
  // JetStream in operator mode needs a system account (without JetStream of its own).
  const systemJwt = natsJwt(operator, system.getPublicKey(), 'SYS', { type: 'account', limits: unlimited });
  const accountJwt = natsJwt(operator, account.getPublicKey(), 'nettel', { type: 'account', limits: { ...unlimited, ...jetstream } });
  const userJwt = natsJwt(account, user.getPublicKey(), 'api', { type: 'user', pub: {}, sub: {}, subs: -1, data: -1, payload: -1 });
  const port = await natsServerWith(
    'creds',
    `operator: "${operatorJwt}"\nresolver: MEMORY\nsystem_account: ${system.getPublicKey()}\n` +
      `resolver_preload: { ${system.getPublicKey()}: "${systemJwt}", ${account.getPublicKey()}: "${accountJwt}" }`,
  );
  const credsFile = path.join(root, 'api.creds');
  const seed = new TextDecoder().decode(user.getSeed());
  fs.writeFileSync(
    credsFile,
    `-----BEGIN NATS USER JWT-----\n${userJwt}\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n`,
    { mode: 0o600 },
  );
  const url = `nats://127.0.0.1:${port}`;
  expect(await outcome({ url, auth: { credsFile } })).toBe('jetstream reached');
  expect(await outcome({ url })).toBe('AUTHORIZATION_VIOLATION');
});

describe('mutual TLS', () => {
  /** A CA, and a server and a client certificate it signed, made with openssl. */
  function certificates(dir: string) {
    fs.mkdirSync(dir, { recursive: true });
    const f = (name: string) => path.join(dir, name);
    const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=nettel test CA', '-keyout', f('ca.key'), '-out', f('ca.pem'));
    for (const [name, ext] of [['server', 'subjectAltName=IP:127.0.0.1,DNS:localhost'], ['client', 'extendedKeyUsage=clientAuth']] as const) {
      openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${name}`, '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`));
      fs.writeFileSync(f(`${name}.ext`), `${ext}\n`);
      openssl('x509', '-req', '-in', f(`${name}.csr`), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-days', '1', '-extfile', f(`${name}.ext`), '-out', f(`${name}.pem`));
    }
    return f;
  }

  test('the client verifies the server by the CA and presents its certificate; a client without one is refused', async () => {
    const f = certificates(path.join(root, 'tls'));
    const port = await natsServerWith('tls', `tls { cert_file: "${f('server.pem')}", key_file: "${f('server.key')}", ca_file: "${f('ca.pem')}", verify: true }`);
    const url = `nats://127.0.0.1:${port}`;
    expect(await outcome({ url, tls: { caFile: f('ca.pem'), certFile: f('client.pem'), keyFile: f('client.key') } })).toBe('jetstream reached');
    // Refused in the handshake, which nats.js notices only at its connection timeout: a short one here.
    await expect(connect({ servers: url, tls: { caFile: f('ca.pem') }, timeout: 2_000, reconnect: false })).rejects.toThrow();
  });
});
