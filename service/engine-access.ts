import { z } from 'zod';
import type { ClickHouseTls } from '../storage/clickhouse';
import type { NatsAuth, NatsTls } from '../streams/nats-client';
import type { TemporalTls } from '../temporal/temporal-client';

/**
 * How the service reaches engines it does not start: credentials and TLS for
 * NATS, ClickHouse and Temporal, read from the environment by service/config.ts.
 * Files are named here and read by each client when it connects.
 */
const unsetIfBlank = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? undefined : value);
const optionalText = z.preprocess(unsetIfBlank, z.string().optional());

export const engineAccessEnv = {
  NATS_USER: optionalText,
  NATS_PASSWORD: optionalText,
  NATS_TOKEN: optionalText,
  NATS_NKEY_SEED_FILE: optionalText,
  NATS_CREDS_FILE: optionalText,
  NATS_TLS_CA_FILE: optionalText,
  NATS_TLS_CERT_FILE: optionalText,
  NATS_TLS_KEY_FILE: optionalText,
  CLICKHOUSE_TLS_CA_FILE: optionalText,
  CLICKHOUSE_TLS_CERT_FILE: optionalText,
  CLICKHOUSE_TLS_KEY_FILE: optionalText,
  TEMPORAL_TLS_CA_FILE: optionalText,
  TEMPORAL_TLS_CERT_FILE: optionalText,
  TEMPORAL_TLS_KEY_FILE: optionalText,
  TEMPORAL_TLS_SERVER_NAME: optionalText,
  TEMPORAL_API_KEY: optionalText,
};

type AccessEnv = { [K in keyof typeof engineAccessEnv]?: string } & { NATS_URL?: string; CLICKHOUSE_URL?: string; TEMPORAL_ADDRESS?: string };

function invalid(message: string): Error {
  return new Error(`invalid configuration: ${message}`);
}

/** A client certificate comes with its key: one without the other is a mistake, named. */
function certificatePair(prefix: string, cert: string | undefined, key: string | undefined): void {
  if (Boolean(cert) !== Boolean(key)) throw invalid(`${prefix}_TLS_CERT_FILE and ${prefix}_TLS_KEY_FILE: set both for mutual TLS, or neither`);
}

/** `scheme://user:password@host` or `scheme://token@host`: the credentials apart from the address. */
function splitUrlCredentials(url: string): { address: string; auth?: NatsAuth } {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)?(?:([^@/]*)@)?(.*)$/i.exec(url.trim())!;
  const address = `${m[1] ?? ''}${m[3]}`;
  const userInfo = m[2];
  if (userInfo === undefined) return { address };
  const colon = userInfo.indexOf(':');
  if (colon < 0) return { address, auth: { token: decodeURIComponent(userInfo) } };
  return { address, auth: { user: decodeURIComponent(userInfo.slice(0, colon)), password: decodeURIComponent(userInfo.slice(colon + 1)) } };
}

/** The one way of authenticating the settings give (user and password, token, NKey seed, creds file), if any. */
function natsAuthOf(e: AccessEnv): NatsAuth | undefined {
  if (e.NATS_PASSWORD && !e.NATS_USER) throw invalid('NATS_PASSWORD: needs NATS_USER');
  if (e.NATS_USER && e.NATS_PASSWORD === undefined) throw invalid('NATS_USER: needs NATS_PASSWORD');
  const given: NatsAuth[] = [];
  if (e.NATS_USER) given.push({ user: e.NATS_USER, password: e.NATS_PASSWORD ?? '' });
  if (e.NATS_TOKEN) given.push({ token: e.NATS_TOKEN });
  if (e.NATS_NKEY_SEED_FILE) given.push({ nkeySeedFile: e.NATS_NKEY_SEED_FILE });
  if (e.NATS_CREDS_FILE) given.push({ credsFile: e.NATS_CREDS_FILE });
  if (given.length > 1) throw invalid('NATS_USER, NATS_TOKEN, NATS_NKEY_SEED_FILE, NATS_CREDS_FILE: set one way of authenticating to NATS, not several');
  return given[0];
}

/**
 * NATS_URL without credentials, and how to authenticate and encrypt. Credentials
 * may sit in the URL (the same on every server of the list) or in their own
 * settings, not both. The embedded nats-server makes its own credentials: these
 * settings need a NATS_URL.
 */
export function natsAccessOf(e: AccessEnv): { url?: string; auth?: NatsAuth; tls?: NatsTls } {
  const settingsAuth = natsAuthOf(e);
  const tls = e.NATS_TLS_CA_FILE || e.NATS_TLS_CERT_FILE ? { caFile: e.NATS_TLS_CA_FILE, certFile: e.NATS_TLS_CERT_FILE, keyFile: e.NATS_TLS_KEY_FILE } : undefined;
  certificatePair('NATS', e.NATS_TLS_CERT_FILE, e.NATS_TLS_KEY_FILE);
  if (!e.NATS_URL) {
    if (settingsAuth || tls) throw invalid('NATS credentials and TLS settings need a NATS_URL; the embedded nats-server generates its own credentials');
    return {};
  }
  const servers = e.NATS_URL.split(',').map(splitUrlCredentials);
  const urlAuths = new Set(servers.map((s) => JSON.stringify(s.auth ?? null)));
  if (urlAuths.size > 1) throw invalid('NATS_URL: give every server the same credentials, or put them in NATS_USER and NATS_PASSWORD');
  const urlAuth = servers[0]!.auth;
  if (urlAuth && settingsAuth) throw invalid('NATS_URL carries credentials and other NATS credential settings are set too: give them once');
  return { url: servers.map((s) => s.address).join(','), auth: urlAuth ?? settingsAuth, tls };
}

/** TLS to a ClickHouse server: its CA, and a client certificate for mutual TLS, over an https:// CLICKHOUSE_URL. */
export function clickhouseTlsOf(e: AccessEnv): ClickHouseTls | undefined {
  certificatePair('CLICKHOUSE', e.CLICKHOUSE_TLS_CERT_FILE, e.CLICKHOUSE_TLS_KEY_FILE);
  if (!e.CLICKHOUSE_TLS_CA_FILE) {
    if (e.CLICKHOUSE_TLS_CERT_FILE) throw invalid('CLICKHOUSE_TLS_CERT_FILE: needs CLICKHOUSE_TLS_CA_FILE, the CA of the server');
    return undefined;
  }
  if (!e.CLICKHOUSE_URL?.startsWith('https://')) throw invalid('CLICKHOUSE_TLS_CA_FILE: needs an https:// CLICKHOUSE_URL');
  return { caFile: e.CLICKHOUSE_TLS_CA_FILE, certFile: e.CLICKHOUSE_TLS_CERT_FILE, keyFile: e.CLICKHOUSE_TLS_KEY_FILE };
}

/** Mutual TLS or an API key (which implies TLS) to a Temporal frontend; the embedded dev server takes neither. */
export function temporalAccessOf(e: AccessEnv): { tls?: TemporalTls; apiKey?: string } {
  certificatePair('TEMPORAL', e.TEMPORAL_TLS_CERT_FILE, e.TEMPORAL_TLS_KEY_FILE);
  const anyTls = e.TEMPORAL_TLS_CA_FILE || e.TEMPORAL_TLS_CERT_FILE || e.TEMPORAL_TLS_SERVER_NAME;
  const tls = anyTls
    ? { caFile: e.TEMPORAL_TLS_CA_FILE, certFile: e.TEMPORAL_TLS_CERT_FILE, keyFile: e.TEMPORAL_TLS_KEY_FILE, serverName: e.TEMPORAL_TLS_SERVER_NAME }
    : undefined;
  if ((tls || e.TEMPORAL_API_KEY) && !e.TEMPORAL_ADDRESS) throw invalid('TEMPORAL_TLS_* and TEMPORAL_API_KEY need a TEMPORAL_ADDRESS; the embedded dev server takes neither');
  return { tls, apiKey: e.TEMPORAL_API_KEY };
}
