import { headers as natsHeaders } from 'nats';
import { flowRowJson, flowSchema } from '../../core/flow';
import { telemetryHeaderNames } from '../../core/telemetry-headers';
import { names } from '../../streams/names';
import { maxTelemetryMessageBytes } from '../../streams/telemetry-publisher';
import type { IncidentView, Page } from '../support/api-types';
import { synFlood } from '../support/detection-flows';
import { orgIs, storedCount } from '../support/stored-count';
import { startTestStack, type TestStack } from '../support/test-stack';
import { waitFor, waitForDetectionDrained } from '../support/wait';

/**
 * Whoever can publish on the detection feed's subjects is not trusted: a
 * message that is no copy of written flows (not rows, rows of another
 * workspace, a forged or missing header, a workspace that does not exist,
 * out of range, oversize) is terminated and counted by reason, none of its
 * flows counted, and the flows copied after it are still judged. Each test
 * publishes straight to the feed, as a hostile publisher would.
 */
describe('hostile messages on the detection feed', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack('chdb', { ROLES: 'api,stream-workers', WORKER_MAX_WAIT_MS: '20' });
  });
  afterAll(() => t.stop());

  const prefix = () => t.stack.config.nats.prefix;

  /** A workspace whose rules open an incident for the test's flood (about 4,500 packets a second to one address). */
  async function workspace(): Promise<{ key: string; org: string }> {
    const { key, org_id } = await t.mintKey({ role: 'operator' });
    expect((await t.request('PUT', '/v1/detection-rules', { key, body: { rates: { thresholds: { total: { pps: 3_000 } } } } })).status).toBe(200);
    return { key, org: org_id };
  }

  /** A flood's rows as the writers store them (and copy them), of `org`. */
  const floodRows = (org: string, seconds = 12) =>
    synFlood('203.0.113.9', Date.now() - 60_000, seconds).map((f, i) => flowRowJson(flowSchema.parse(f), { org_id: org, event_id: `evt_h${i}`, ts: 0, received_at: Date.now() }).json);

  /** Publishes a message on the feed subject of `subjectOrg`; headers as the writers copy them unless told. */
  async function publish(subjectOrg: string, body: string | Buffer, over: { org?: string | null; kind?: string } = {}): Promise<void> {
    const h = natsHeaders();
    h.set(telemetryHeaderNames.kind, over.kind ?? 'flow');
    if (over.org !== null) h.set(telemetryHeaderNames.org, over.org ?? subjectOrg);
    await t.stack.nats.js().publish(names(prefix()).detectionSubject(subjectOrg), typeof body === 'string' ? Buffer.from(body) : body, { headers: h });
  }

  async function refused(reason: string): Promise<number> {
    const values = (await t.stack.registry.getSingleMetric('nettel_detection_messages_refused_total')?.get())?.values ?? [];
    return values.filter((v) => v.labels.reason === reason).reduce((n, v) => n + v.value, 0);
  }
  /** Runs `publishing`, then waits until one more message was refused for `reason`. */
  async function refusedFor(reason: string, publishing: () => Promise<void>): Promise<void> {
    const before = await refused(reason);
    await publishing();
    await waitFor(async () => ((await refused(reason)) > before ? true : undefined), 30_000, `a message refused for ${reason}`);
  }

  const incidents = async (key: string) => (await t.request<Page<IncidentView>>('GET', '/v1/incidents?limit=100', { key })).body.data;

  test('after a message of garbage bytes, a flood copied on the same subject is still judged and opens its incident', async () => {
    const { key, org } = await workspace();
    await refusedFor('not_rows', () => publish(org, Buffer.from([0x00, 0xff, 0xfe, 0x7b, 0x0a, 0x13])));
    await publish(org, floodRows(org).join('\n') + '\n');
    const opened = await waitFor(async () => ((await incidents(key)).length > 0 ? incidents(key) : undefined), 30_000, 'an incident');
    expect(opened.map((i) => i.service)).toEqual(['203.0.113.9']);
  });

  test('a refused message leaves the feed: terminated, not offered again', async () => {
    const { org } = await workspace();
    await refusedFor('not_rows', () => publish(org, 'not json at all\n'));
    await waitForDetectionDrained(t.stack.nats.jsm, prefix());
    const consumer = await t.stack.nats.jsm.consumers.info(names(prefix()).detection, names(prefix()).detector);
    expect(consumer.num_ack_pending).toBe(0);
  });

  test('a flood whose last line is truncated opens no incident', async () => {
    const { key, org } = await workspace();
    const rows = floodRows(org);
    await refusedFor('not_rows', () => publish(org, [...rows.slice(0, -1), rows.at(-1)!.slice(0, 30)].join('\n') + '\n'));
    expect(await incidents(key)).toEqual([]);
  });

  test('a flood with one row missing its packets opens no incident', async () => {
    const { key, org } = await workspace();
    const rows = floodRows(org);
    const missing = JSON.parse(rows[0]!) as Record<string, unknown>;
    delete missing.packets;
    await refusedFor('bad_row', () => publish(org, [JSON.stringify(missing), ...rows.slice(1)].join('\n') + '\n'));
    expect(await incidents(key)).toEqual([]);
  });

  test('rows with packets past a safe integer open no incident', async () => {
    const { key, org } = await workspace();
    const rows = floodRows(org, 1).map((r) => r.replace(/"packets":\d+/, '"packets":1e300'));
    await refusedFor('bad_row', () => publish(org, rows.join('\n') + '\n'));
    expect(await incidents(key)).toEqual([]);
  });

  test('rows dated a year ahead open no incident and leave later flows of the workspace judged', async () => {
    const { key, org } = await workspace();
    const ahead = floodRows(org, 1).map((r) => r.replace(/"ts":\d+/, `"ts":${Date.now() + 365 * 86_400_000}`));
    await refusedFor('bad_row', () => publish(org, ahead.join('\n') + '\n'));
    await publish(org, floodRows(org).join('\n') + '\n');
    const opened = await waitFor(async () => ((await incidents(key)).length > 0 ? incidents(key) : undefined), 30_000, 'an incident');
    expect(opened.map((i) => i.service)).toEqual(['203.0.113.9']);
  });

  test("a flood of workspace B's rows on workspace A's subject is counted for neither", async () => {
    const [a, b] = [await workspace(), await workspace()];
    await refusedFor('org_mismatch', () => publish(a.org, floodRows(b.org).join('\n') + '\n'));
    expect([await incidents(a.key), await incidents(b.key)]).toEqual([[], []]);
  });

  test("a flood on workspace A's subject whose header names workspace B is counted for neither", async () => {
    const [a, b] = [await workspace(), await workspace()];
    await refusedFor('bad_headers', () => publish(a.org, floodRows(a.org).join('\n') + '\n', { org: b.org }));
    expect([await incidents(a.key), await incidents(b.key)]).toEqual([[], []]);
  });

  test('a flood without the workspace header opens no incident', async () => {
    const { key, org } = await workspace();
    await refusedFor('bad_headers', () => publish(org, floodRows(org).join('\n') + '\n', { org: null }));
    expect(await incidents(key)).toEqual([]);
  });

  test('a flood on the subject of a workspace that does not exist stores no signal for it', async () => {
    const ghost = `org_ghost${Date.now().toString(36)}`;
    await refusedFor('unknown_workspace', () => publish(ghost, floodRows(ghost).join('\n') + '\n'));
    expect(await storedCount(t.stack.clickhouse, 'signals', orgIs(ghost))).toBe(0);
  });

  test('a message larger than any copy the writers make is refused as oversize', async () => {
    const { key, org } = await workspace();
    const bound = maxTelemetryMessageBytes(t.stack.nats.nc);
    const rows = floodRows(org);
    const lines: string[] = [];
    for (let bytes = 0, i = 0; bytes <= bound; i++) {
      const line = rows[i % rows.length]!;
      lines.push(line);
      bytes += line.length + 1;
    }
    await refusedFor('oversize', () => publish(org, lines.join('\n') + '\n'));
    expect(await incidents(key)).toEqual([]);
  });
});
