import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../service/config';
import { natsAccessOptions } from '../../streams/nats-client';
import { temporalConnectionOptions } from '../../temporal/temporal-client';

/** A configuration against servers of an operator's (the settings in this file need engine addresses). */
const servers = {
  NATS_URL: 'nats://nats-1:4222,nats://nats-2:4222',
  CLICKHOUSE_URL: 'https://clickhouse:8443',
  TEMPORAL_ADDRESS: 'temporal:7233',
  WEBHOOK_SECRETS_KEY: 'k'.repeat(32),
};
const load = (env: Record<string, string>) => loadConfig({ ...servers, ...env });

describe('credentials and TLS for the engines', () => {
  test('NATS takes a user and password, and NATS_URL keeps only the addresses', () => {
    const { nats } = load({ NATS_USER: 'api', NATS_PASSWORD: 'pw' });
    expect(nats.url).toBe('nats://nats-1:4222,nats://nats-2:4222');
    expect(nats.auth).toEqual({ user: 'api', password: 'pw' });
    expect(natsAccessOptions(nats)).toEqual({ user: 'api', pass: 'pw' });
  });

  test('credentials in NATS_URL are taken out of it: user and password, or a token alone', () => {
    const withUser = load({ NATS_URL: 'nats://api:p%40ss@nats-1:4222,nats://api:p%40ss@nats-2:4222' }).nats;
    expect(withUser).toMatchObject({ url: 'nats://nats-1:4222,nats://nats-2:4222', auth: { user: 'api', password: 'p@ss' } });
    expect(load({ NATS_URL: 'tls://s3cr3t@nats:4222' }).nats).toMatchObject({ url: 'tls://nats:4222', auth: { token: 's3cr3t' } });
  });

  test('NATS takes a token, an NKey seed file or a creds file, each as its own authenticator', () => {
    expect(natsAccessOptions(load({ NATS_TOKEN: 't0k' }).nats)).toEqual({ token: 't0k' });
    expect(load({ NATS_NKEY_SEED_FILE: '/run/secrets/nats.nk' }).nats.auth).toEqual({ nkeySeedFile: '/run/secrets/nats.nk' });
    expect(load({ NATS_CREDS_FILE: '/run/secrets/nats.creds' }).nats.auth).toEqual({ credsFile: '/run/secrets/nats.creds' });
    expect(typeof natsAccessOptions({ auth: { credsFile: '/run/secrets/nats.creds' } }).authenticator).toBe('function');
  });

  test('NATS TLS names the CA and the client certificate and key, as nats.js reads them', () => {
    const { nats } = load({ NATS_TLS_CA_FILE: '/tls/ca.pem', NATS_TLS_CERT_FILE: '/tls/c.pem', NATS_TLS_KEY_FILE: '/tls/c.key' });
    expect(natsAccessOptions(nats)).toEqual({ tls: { caFile: '/tls/ca.pem', certFile: '/tls/c.pem', keyFile: '/tls/c.key' } });
  });

  test('two ways of authenticating to NATS at once are refused, with the settings named', () => {
    expect(() => load({ NATS_USER: 'a', NATS_PASSWORD: 'b', NATS_TOKEN: 'c' })).toThrow(/NATS_USER, NATS_TOKEN, NATS_NKEY_SEED_FILE, NATS_CREDS_FILE/);
    expect(() => load({ NATS_URL: 'nats://a:b@nats:4222', NATS_TOKEN: 'c' })).toThrow(/give them once/);
    expect(() => load({ NATS_PASSWORD: 'b' })).toThrow(/NATS_PASSWORD: needs NATS_USER/);
  });

  test('a client certificate without its key is refused, for each engine', () => {
    expect(() => load({ NATS_TLS_CERT_FILE: '/c.pem' })).toThrow(/NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE/);
    expect(() => load({ CLICKHOUSE_TLS_CA_FILE: '/ca.pem', CLICKHOUSE_TLS_KEY_FILE: '/c.key' })).toThrow(/CLICKHOUSE_TLS_CERT_FILE and CLICKHOUSE_TLS_KEY_FILE/);
    expect(() => load({ TEMPORAL_TLS_CERT_FILE: '/c.pem' })).toThrow(/TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE/);
  });

  test('credentials for the embedded engines are refused: the embedded nats-server makes its own, the dev server takes none', () => {
    expect(() => loadConfig({ NATS_USER: 'a', NATS_PASSWORD: 'b' })).toThrow(/need a NATS_URL/);
    expect(() => loadConfig({ TEMPORAL_API_KEY: 'k' })).toThrow(/need a TEMPORAL_ADDRESS/);
  });

  test('ClickHouse TLS needs an https URL and takes a CA, with a client certificate for mutual TLS', () => {
    expect(load({ CLICKHOUSE_TLS_CA_FILE: '/ca.pem', CLICKHOUSE_TLS_CERT_FILE: '/c.pem', CLICKHOUSE_TLS_KEY_FILE: '/c.key' }).clickhouse.tls).toEqual({
      caFile: '/ca.pem',
      certFile: '/c.pem',
      keyFile: '/c.key',
    });
    expect(() => load({ CLICKHOUSE_URL: 'http://clickhouse:8123', CLICKHOUSE_TLS_CA_FILE: '/ca.pem' })).toThrow(/needs an https:\/\/ CLICKHOUSE_URL/);
  });

  describe('Temporal', () => {
    let dir: string;
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-tls-'));
      for (const f of ['ca.pem', 'c.pem', 'c.key']) fs.writeFileSync(path.join(dir, f), `contents of ${f}`);
    });
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    test('mutual TLS reads the CA and the client pair, and names the server as its certificate does', () => {
      const { temporal } = load({
        TEMPORAL_TLS_CA_FILE: path.join(dir, 'ca.pem'),
        TEMPORAL_TLS_CERT_FILE: path.join(dir, 'c.pem'),
        TEMPORAL_TLS_KEY_FILE: path.join(dir, 'c.key'),
        TEMPORAL_TLS_SERVER_NAME: 'frontend.temporal',
      });
      const options = temporalConnectionOptions({ ...temporal, address: temporal.address! });
      expect(options.tls?.serverNameOverride).toBe('frontend.temporal');
      expect(String(options.tls?.serverRootCACertificate)).toBe('contents of ca.pem');
      expect(String(options.tls?.clientCertPair?.crt)).toBe('contents of c.pem');
      expect(String(options.tls?.clientCertPair?.key)).toBe('contents of c.key');
      expect(options.apiKey).toBeUndefined();
    });

    test('an API key goes over TLS with the system CAs; no setting, no TLS', () => {
      const { temporal } = load({ TEMPORAL_API_KEY: 'tk' });
      expect(temporalConnectionOptions({ ...temporal, address: temporal.address! })).toEqual({ address: 'temporal:7233', tls: {}, apiKey: 'tk' });
      expect(temporalConnectionOptions({ address: 'temporal:7233' })).toEqual({ address: 'temporal:7233' });
    });
  });
});
