import { z } from 'zod';
import { certificatePair, defineSettings, integer, invalidSetting, optionalAddress, optionalText, port, setting, type SettingValues } from '../core/settings';
import type { NatsAuth, NatsTls } from './nats-client';
import { defaultTopology } from './topology';

/** The JetStream topology's own defaults (the prefix is NATS_PREFIX's). */
const topology = defaultTopology('');

const access = {
  NATS_URL: setting(optionalAddress(), 'NATS servers, e.g. `nats://n1:4222,nats://n2:4222`; credentials written in it are taken out of it and never logged', 'embedded'),
  NATS_USER: setting(
    optionalText(),
    'the user the service authenticates to `NATS_URL` as, with `NATS_PASSWORD`: one way of authenticating, or `NATS_TOKEN`, `NATS_NKEY_SEED_FILE` or `NATS_CREDS_FILE`. Per-role users and permissions: [security/engines.md](security/engines.md)',
    'embedded: generated',
  ),
  NATS_PASSWORD: setting(
    optionalText(),
    "`NATS_USER`'s password. The embedded nats-server requires a user whose password is generated into `$DATA_DIR/nats-password` (mode 0600)",
    'embedded: generated',
  ),
  NATS_TOKEN: setting(optionalText(), 'a token the service authenticates to `NATS_URL` with'),
  NATS_NKEY_SEED_FILE: setting(optionalText(), 'a file holding the NKey seed the service authenticates to `NATS_URL` with'),
  NATS_CREDS_FILE: setting(optionalText(), 'a creds file (JWT and NKey seed) the service authenticates to `NATS_URL` with'),
  NATS_TLS_CA_FILE: setting(optionalText(), "TLS to NATS: the servers' CA"),
  NATS_TLS_CERT_FILE: setting(optionalText(), 'a client certificate for mutual TLS to NATS, with `NATS_TLS_KEY_FILE`'),
  NATS_TLS_KEY_FILE: setting(optionalText(), "the client certificate's key, for mutual TLS to NATS"),
};

type AccessValues = SettingValues<typeof access>;

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
function natsAuthOf(e: AccessValues): NatsAuth | undefined {
  if (e.NATS_PASSWORD && !e.NATS_USER) throw invalidSetting('NATS_PASSWORD: needs NATS_USER');
  if (e.NATS_USER && e.NATS_PASSWORD === undefined) throw invalidSetting('NATS_USER: needs NATS_PASSWORD');
  const given: NatsAuth[] = [];
  if (e.NATS_USER) given.push({ user: e.NATS_USER, password: e.NATS_PASSWORD ?? '' });
  if (e.NATS_TOKEN) given.push({ token: e.NATS_TOKEN });
  if (e.NATS_NKEY_SEED_FILE) given.push({ nkeySeedFile: e.NATS_NKEY_SEED_FILE });
  if (e.NATS_CREDS_FILE) given.push({ credsFile: e.NATS_CREDS_FILE });
  if (given.length > 1) throw invalidSetting('NATS_USER, NATS_TOKEN, NATS_NKEY_SEED_FILE, NATS_CREDS_FILE: set one way of authenticating to NATS, not several');
  return given[0];
}

/**
 * NATS_URL without credentials, and how to authenticate and encrypt. Credentials
 * may sit in the URL (the same on every server of the list) or in their own
 * settings, not both. The embedded nats-server makes its own credentials: these
 * settings need a NATS_URL.
 */
function natsAccessOf(e: AccessValues): { url?: string; auth?: NatsAuth; tls?: NatsTls } {
  const settingsAuth = natsAuthOf(e);
  const tls = e.NATS_TLS_CA_FILE || e.NATS_TLS_CERT_FILE ? { caFile: e.NATS_TLS_CA_FILE, certFile: e.NATS_TLS_CERT_FILE, keyFile: e.NATS_TLS_KEY_FILE } : undefined;
  certificatePair('NATS', e.NATS_TLS_CERT_FILE, e.NATS_TLS_KEY_FILE);
  if (!e.NATS_URL) {
    if (settingsAuth || tls) throw invalidSetting('NATS credentials and TLS settings need a NATS_URL; the embedded nats-server generates its own credentials');
    return {};
  }
  const servers = e.NATS_URL.split(',').map(splitUrlCredentials);
  const urlAuths = new Set(servers.map((s) => JSON.stringify(s.auth ?? null)));
  if (urlAuths.size > 1) throw invalidSetting('NATS_URL: give every server the same credentials, or put them in NATS_USER and NATS_PASSWORD');
  const urlAuth = servers[0]!.auth;
  if (urlAuth && settingsAuth) throw invalidSetting('NATS_URL carries credentials and other NATS credential settings are set too: give them once');
  return { url: servers.map((s) => s.address).join(','), auth: urlAuth ?? settingsAuth, tls };
}

/** Where NATS is and how to reach it, the JetStream objects' names and bounds, and the embedded nats-server. */
export const natsSettings = defineSettings(
  'NATS',
  {
    ...access,
    NATS_PREFIX: setting(z.string().regex(/^[A-Za-z0-9_-]+$/).default('nettel'), 'prefix of every stream, consumer and subject name'),
    NATS_REPLICAS: setting(
      integer(1, 5).default(topology.replicas),
      'copies JetStream keeps of every stream and key-value bucket (1 to 5; more than 1 needs `NATS_URL`: the embedded server is one node). The deployments in `deploy/` set 3; a changed count is applied to existing streams and buckets at start',
    ),
    NATS_STREAM_MAX_BYTES: setting(z.coerce.number().int().positive().default(topology.maxBytes), 'byte limit of the telemetry backlog; when it is full, ingestion answers 503'),
    NATS_ACK_WAIT_MS: setting(integer(1000, 600_000).default(topology.ackWaitMs), 'how long a stream worker may hold a message before JetStream redelivers it'),
    EMBEDDED_NATS_PORT: setting(port().default(14222), 'port of the embedded nats-server'),
    NATS_SERVER: setting(optionalText(), 'the nats-server binary the embedded server runs', "the set-up's build"),
    EMBEDDED_NATS_MAX_FILE_STORE: setting(
      z.coerce.number().int().positive().default(20 * 1024 ** 3),
      "the embedded server's bound on its JetStream store (`max_file_store`). The streams reserve their byte limits in it at creation: `NATS_STREAM_MAX_BYTES` plus 4 GiB (dead letters, the outbox and the rate detectors' feed), so it must be at least that; a bound too small fails the start with an error naming the stream, its reservation and this setting",
    ),
  },
  (e) => {
    // The embedded nats-server is one node: a stream with more replicas than nodes cannot be created.
    if (!e.NATS_URL && e.NATS_REPLICAS > 1) {
      throw invalidSetting('NATS_REPLICAS: more than 1 needs a NATS cluster (NATS_URL); the embedded nats-server is a single node');
    }
    return {
      nats: {
        /** `url` without credentials: those are in `auth` (taken out of NATS_URL); `auth` for NATS_URL's servers, the embedded nats-server's are generated (service/roles/engines.ts). */
        ...natsAccessOf(e),
        prefix: e.NATS_PREFIX,
        embeddedPort: e.EMBEDDED_NATS_PORT,
        streamMaxBytes: e.NATS_STREAM_MAX_BYTES,
        ackWaitMs: e.NATS_ACK_WAIT_MS,
        /** Copies JetStream keeps of every stream and key-value bucket: 1 on the embedded server, 3 on a cluster. */
        replicas: e.NATS_REPLICAS,
        /** A nats-server binary for the embedded server; without one, the set-up's build in the tools folder. */
        server: e.NATS_SERVER,
        /** The embedded server's bound on its JetStream file store (`max_file_store`). */
        embeddedMaxFileStoreBytes: e.EMBEDDED_NATS_MAX_FILE_STORE,
      },
    };
  },
);
