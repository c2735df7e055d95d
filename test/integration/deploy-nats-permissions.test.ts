import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { natsServerBinaryName, requireExecutable } from '../../engines/binaries';
import { localGobgpServer } from '../../engines/gobgp';
import { LocalProcess, freePort } from '../../engines/local-process';
import { createLogger } from '../../observability/logger';
import { loadConfig } from '../../service/config';
import { ensureJetStreamObjects } from '../../service/jetstream-objects';
import { NatsClient } from '../../streams/nats-client';
import type { Page, ReplayRequested, ReplayView } from '../support/api-types';
import { metricTotal } from '../support/metrics';
import { startTestStack, type TestStack } from '../support/test-stack';
import { freeUdpPorts } from '../support/udp';
import { waitFor, waitForTelemetryDrained } from '../support/wait';
import { waitForStoredCount } from '../support/stored-count';
import { eventId } from '../../core/webhook-events';
import { names } from '../../streams/names';

/**
 * deploy/nats/nettel.conf as a deployment's nodes run it: every role of the
 * service started against it as its own NATS user (the topology made first
 * by the admin user, as the topology job does), with telemetry going from
 * the api's user through the stream workers' into ClickHouse; and each user
 * refused what its role does not do.
 */
const roles = ['admin', 'api', 'stream-workers', 'temporal-worker', 'collector'] as const;
type NatsUser = (typeof roles)[number];
const passwordVariable = (user: NatsUser) => `NETTEL_NATS_${user.toUpperCase().replace(/-/g, '_')}_PASSWORD`;
// Hex, as docs/security/engines.md makes them: nats-server parses a variable's value as a config token, and a
// base64url one such as `12-3Y…` reads as a malformed date and stops the server.
const passwords = Object.fromEntries(roles.map((r) => [r, randomBytes(16).toString('hex')])) as Record<NatsUser, string>;

const log = createLogger('silent');
const flow = { src_ip: '192.0.2.1', dst_ip: '192.0.2.2', bytes: 10, packets: 1, protocol: 'udp' };

let dir: string;
let server: LocalProcess;
let speaker: LocalProcess | undefined;
let url: string;
/** Settings every role shares: the prefix the config's subjects name, one database, the keys the roles share. */
let shared: Record<string, string>;
const stacks: TestStack[] = [];
/** The stacks of the test that starts every role, by NATS user: later tests attack them. */
const byUser: Partial<Record<NatsUser, TestStack>> = {};

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nettel-deploy-nats-'));
  const config = loadConfig(process.env);
  const command = config.nats.server ?? requireExecutable(natsServerBinaryName, [config.toolsDir, ...config.binPath], 'run the set-up');
  const conf = path.resolve(__dirname, '../../deploy/nats/nettel.conf');
  const env = { ...process.env, ...Object.fromEntries(roles.map((r) => [passwordVariable(r), passwords[r]])) };
  let port = 0;
  // A free port can be taken by the other test worker before the server binds it: only that is tried again.
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    server = new LocalProcess({ name: 'nats-server', command, args: ['-c', conf, '-js', '-a', '127.0.0.1', '-p', String(port), '-sd', path.join(dir, 'store')], dir, port, env }, log);
    try {
      await server.start();
      break;
    } catch (err) {
      if (attempt === 3 || !/address already in use/.test(String(err))) throw err;
    }
  }
  url = `nats://127.0.0.1:${port}`;
  shared = {
    NATS_URL: url,
    NATS_PREFIX: 'nettel',
    NATS_STREAM_MAX_BYTES: String(256 * 1024 ** 2),
    NATS_DEAD_LETTER_MAX_BYTES: String(64 * 1024 ** 2),
    CLICKHOUSE_DATABASE: `t_${randomBytes(5).toString('hex')}`,
    TEMPORAL_TASK_QUEUE: `t-${randomBytes(5).toString('hex')}`,
    DECISION_SIGNING_KEY: randomBytes(32).toString('base64url'),
    WORKER_MAX_WAIT_MS: '50',
  };
}, 60_000);

afterAll(async () => {
  for (const t of stacks.reverse()) await t.stop().catch(() => undefined);
  await speaker?.stop();
  await server?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const asUser = (user: NatsUser) => ({ NATS_USER: user, NATS_PASSWORD: passwords[user] });

/** A connection as `user`, taking its answers on that role's own inbox as the service's processes do. */
async function connectAs(user: NatsUser): Promise<NatsConnection> {
  return connect({ servers: url, user, pass: passwords[user], reconnect: false, inboxPrefix: `_INBOX_${user}` });
}

const serverLog = () => fs.readFileSync(path.join(dir, 'nats-server.log'), 'utf8');

/** Whether the server refused `user` a publish to `subject` while `work` ran (nats.js may only time the request out). */
async function refused(user: NatsUser, subject: string, work: (nc: NatsConnection) => Promise<unknown>): Promise<boolean> {
  const line = `"$G/user:${user}" - Publish Violation - Subject "${subject}"`;
  const before = serverLog().split(line).length;
  const nc = await connectAs(user);
  try {
    await work(nc).catch(() => undefined);
    const logged = () => Promise.resolve(serverLog().split(line).length > before ? true : undefined);
    return await waitFor(logged, 5_000, `the refusal of ${subject}`).catch(() => false);
  } finally {
    await nc.close();
  }
}

test('a client without credentials, or with another role password, is refused', async () => {
  await expect(connect({ servers: url, reconnect: false })).rejects.toMatchObject({ code: 'AUTHORIZATION_VIOLATION' });
  await expect(connect({ servers: url, user: 'api', pass: passwords.collector, reconnect: false })).rejects.toMatchObject({ code: 'AUTHORIZATION_VIOLATION' });
});

test('a role cannot make the topology; the admin user makes it, as the topology job does', async () => {
  const config = loadConfig({ ...process.env, ...shared, ...asUser('api'), CLICKHOUSE_URL: process.env.TEST_CLICKHOUSE_URL });
  const api = new NatsClient({ url, auth: config.nats.auth, name: 'api', inboxPrefix: '_INBOX_api' }, log);
  await api.start();
  try {
    await expect(ensureJetStreamObjects(config, api, log)).rejects.toThrow();
  } finally {
    await api.stop();
  }
  const adminConfig = loadConfig({ ...process.env, ...shared, ...asUser('admin'), CLICKHOUSE_URL: process.env.TEST_CLICKHOUSE_URL });
  const admin = new NatsClient({ url, auth: adminConfig.nats.auth, name: 'admin' }, log);
  await admin.start();
  try {
    await ensureJetStreamObjects(adminConfig, admin, log);
    expect((await admin.jsm.streams.info(names('nettel').stream)).config.num_replicas).toBe(1);
  } finally {
    await admin.stop();
  }
}, 60_000);

test('every role starts as its own user, and telemetry goes from the api through the stream workers into ClickHouse', async () => {
  const logBefore = serverLog().length;
  const [netflow, sflow] = await freeUdpPorts(2);
  const start = async (roleEnv: Record<string, string>, user: NatsUser) => {
    const t = await startTestStack('clickhouse-server', { ...shared, ...roleEnv, ...asUser(user) });
    stacks.push(t);
    byUser[user] = t;
    return t;
  };
  const workers = await start({ ROLES: 'stream-workers' }, 'stream-workers');
  const api = await start({ ROLES: 'api' }, 'api');
  // With a BGP speaker, the temporal-worker also runs the mitigation reconciler, which reads the ledger whole.
  const [bgpPort, apiPort] = await Promise.all([freePort(), freePort()]);
  const { binPath, toolsDir } = loadConfig(process.env);
  speaker = localGobgpServer({ dir: path.join(dir, 'gobgpd'), bgpPort, apiPort, asn: 65010, routerId: '127.0.0.1', binPath, toolsDir }, log);
  await speaker.start();
  const governance = await start({ ROLES: 'temporal-worker', BGP_SPEAKER_ADDRESS: `127.0.0.1:${apiPort}` }, 'temporal-worker');
  await start({ ROLES: 'collector', COLLECTOR_HOST: '127.0.0.1', COLLECTOR_NETFLOW_PORT: String(netflow), COLLECTOR_SFLOW_PORT: String(sflow) }, 'collector');

  const operator = await api.mintKey({ role: 'operator' });
  expect((await api.request('POST', '/flow', { key: operator.key, body: flow })).status).toBe(201);
  // The console's sessions live in their bucket, which the api's user reads and writes: a key session opens, is read, ends.
  const opened = await api.request<{ csrf_token: string }>('POST', '/auth/key-session', { headers: { origin: api.url }, body: { key: operator.key } });
  const cookie = opened.headers.getSetCookie().find((c) => c.startsWith('__Host-nettel_session='))!.split(';')[0]!;
  expect([opened.status, (await api.request('GET', '/auth/session', { headers: { cookie } })).status]).toEqual([201, 200]);
  expect((await api.request('POST', '/auth/logout', { headers: { cookie, origin: api.url, 'x-csrf-token': opened.body.csrf_token } })).status).toBe(200);
  await waitForTelemetryDrained(workers.stack.nats.jsm, 'nettel');
  expect(await waitForStoredCount(api.stack.clickhouse, 'flows', 1, { timeoutMs: 20_000, what: 'the flow in ClickHouse' })).toBe(1);

  // A signal opens an incident (the stream workers publish its event to the outbox, their fan-out takes it), and its
  // replay runs on the temporal-worker, which audits and publishes as its own user.
  const signal = { telemetry: 'bgp', service: 'edge', environment: 'prod', region: 'eu', latency_ms: 5 };
  expect((await api.request('POST', '/ingest', { key: operator.key, body: signal })).status).toBe(202);
  const incident = await waitFor(async () => (await api.request<Page<{ id: string }>>('GET', '/v1/incidents', { key: operator.key })).body.data[0], 30_000, 'the incident');
  const replay = await api.request<ReplayRequested>('POST', '/v1/replay', { key: operator.key, body: { incident_id: incident.id } });
  expect(replay.status).toBe(202);
  const done = await waitFor(async () => {
    const res = await api.request<ReplayView>('GET', `/v1/replays/${replay.body.replay_id}`, { key: operator.key });
    return res.body.status === 'completed' ? res.body : undefined;
  }, 90_000, 'the replay to complete');
  expect(done.report).toMatchObject({ parity: true });
  await waitFor(async () => ((await metricTotal(governance.stack.registry, 'nettel_mitigation_reconciles_total')) >= 2 ? true : undefined), 20_000, 'the reconciler to read the ledger');
  expect(await metricTotal(governance.stack.registry, 'nettel_mitigation_reconcile_failures_total')).toBe(0);
  // Not one request of the four roles was refused while they started and worked.
  expect(serverLog().slice(logBefore).split('\n').filter((l) => /Violation/.test(l))).toEqual([]);
}, 240_000);

test("no other role hears the api's answers: its reads of the console's sessions come back on the api's own inbox", async () => {
  const api = byUser.api!;
  const eavesdropper = await connectAs('stream-workers');
  const heard: string[] = [];
  const refusals: string[] = [];
  const listen = (subject: string) =>
    eavesdropper.subscribe(subject, { callback: (err, msg) => (err ? refusals.push(subject) : heard.push(msg.string())) });
  try {
    // Every role's user could subscribe to `_INBOX.>`, where the api's bucket reads were answered; the api's own inbox is its alone.
    listen('_INBOX.>');
    listen('_INBOX_api.>');
    await eavesdropper.flush();
    const operator = await api.mintKey({ role: 'operator' });
    const opened = await api.request<{ csrf_token: string }>('POST', '/auth/key-session', { headers: { origin: api.url }, body: { key: operator.key } });
    const cookie = opened.headers.getSetCookie().find((c) => c.startsWith('__Host-nettel_session='))!.split(';')[0]!;
    expect((await api.request('GET', '/auth/session', { headers: { cookie } })).status).toBe(200);
    expect((await api.request('POST', '/auth/logout', { headers: { cookie, origin: api.url, 'x-csrf-token': opened.body.csrf_token } })).status).toBe(200);
    await eavesdropper.flush().catch(() => undefined);
    expect(heard.filter((m) => m.includes(opened.body.csrf_token))).toEqual([]);
    expect(heard).toEqual([]);
    expect(refusals).toContain('_INBOX_api.>');
  } finally {
    await eavesdropper.close();
  }
}, 60_000);

test('each role is refused what it does not do', async () => {
  const n = names('nettel');
  const jsm = (nc: NatsConnection) => nc.jetstreamManager();
  // The api publishes telemetry; it neither consumes it nor deletes the stream.
  expect(await refused('api', `$JS.API.STREAM.DELETE.${n.stream}`, async (nc) => (await jsm(nc)).streams.delete(n.stream))).toBe(true);
  const pull = `$JS.API.CONSUMER.MSG.NEXT.${n.stream}.${n.writers}`;
  expect(await refused('api', pull, async (nc) => (await nc.jetstream().consumers.get(n.stream, n.writers)).next({ expires: 1_000 }))).toBe(true);
  // The collector publishes flows; it reads no audit head and writes no incident event.
  const head = '$JS.API.STREAM.MSG.GET.KV_NETTEL_AUDIT_HEADS';
  expect(await refused('collector', head, async (nc) => (await nc.jetstream().views.kv('NETTEL_AUDIT_HEADS', { bindOnly: true })).get('org1'))).toBe(true);
  expect(await refused('collector', 'nettel.outbox.org1', (nc) => nc.jetstream().publish('nettel.outbox.org1', 'x', { timeout: 1_000 }))).toBe(true);
  // The console's sessions are the api's alone.
  const sessions = '$JS.API.STREAM.MSG.GET.KV_NETTEL_SESSIONS';
  expect(await refused('stream-workers', sessions, async (nc) => (await nc.jetstream().views.kv('NETTEL_SESSIONS', { bindOnly: true })).get('s.x'))).toBe(true);
  // The stream workers consume; they publish no telemetry of their own.
  expect(await refused('stream-workers', 'nettel.tel.flow.org1', (nc) => nc.jetstream().publish('nettel.tel.flow.org1', 'x', { timeout: 1_000 }))).toBe(true);
}, 60_000);

test("delivery tasks forged with the api role's credentials are dead-lettered and counted, never signed or sent", async () => {
  const [workers, api] = [byUser['stream-workers']!, byUser.api!];
  const [victim, attacker] = [await api.mintKey({ role: 'operator' }), await api.mintKey({ role: 'operator' })];
  // Documentation space: public as far as the outbound rules go, so only the deliverer's own checks stand between a task and its signing.
  const hook = await api.request<{ id: string }>('POST', '/v1/webhooks', { key: victim.key, body: { url: 'https://203.0.113.10/hook', events: ['incident.opened'] } });
  expect(hook.status).toBe(201);
  const event = (workspace: string, id: string) => ({
    specversion: '1.0', id, source: `/orgs/${workspace}/incidents`, type: 'incident.opened', subject: 'inc_forged', time: new Date().toISOString(),
    datacontenttype: 'application/json', workspace, data: { id: 'inc_forged', message: 'wire the ransom' },
  });
  const dead = async () => (await workers.stack.nats.jsm.streams.info(names('nettel').deadLetter)).state.messages;
  const deadBefore = await dead();
  const nc = await connectAs('api');
  try {
    const js = nc.jetstream();
    // A made-up event on the victim's own subject, and one whose id is derived as the service would, on the attacker's subject.
    await js.publish(`nettel.whdeliver.${victim.org_id}.${hook.body.id}`, JSON.stringify({ webhook_id: hook.body.id, event: event(victim.org_id, 'whe_00000000000000000000') }));
    const derived = eventId(victim.org_id, 'inc_forged', 'incident.opened');
    await js.publish(`nettel.whdeliver.${attacker.org_id}.${hook.body.id}`, JSON.stringify({ webhook_id: hook.body.id, event: event(victim.org_id, derived) }));
    // An outbox event whose subject names the attacker and whose body names the victim.
    await js.publish(`nettel.outbox.${attacker.org_id}`, JSON.stringify(event(victim.org_id, derived)), { msgID: `forged-${derived}` });
  } finally {
    await nc.close();
  }
  const refused = () => metricTotal(workers.stack.registry, 'nettel_webhook_messages_refused_total');
  await waitFor(async () => ((await refused()) >= 3 ? true : undefined), 20_000, 'the forged messages refused');
  // Counted when refused, then published to the dead-letter stream: the count comes first.
  await waitFor(async () => ((await dead()) >= deadBefore + 3 ? true : undefined), 20_000, 'the forged messages dead-lettered');
  const log = await api.request<Page<{ event_id: string }>>('GET', `/v1/webhooks/${hook.body.id}/deliveries`, { key: victim.key });
  expect(log.body.data).toEqual([]);
}, 60_000);
