import { randomBytes } from 'node:crypto';
import { automationIdOf } from '../../application/automation-runs';
import type { ActionSpec } from '../../core/automation-plan';
import { DecisionTokens } from '../../core/decision-token';
import { randomId } from '../../core/ids';
import { noMitigationBounds, type StoredPolicy } from '../../core/mitigation-policy';
import { AutomationsRepo } from '../../storage/automations-repo';
import { IncidentsRepo } from '../../storage/incidents-repo';
import { KeysRepo } from '../../storage/keys-repo';
import { PoliciesRepo } from '../../storage/policies-repo';
import { createAutomationActivities } from '../../workers/governance/activities/automation-activities';
import type { AutomationInput } from '../../workflows/automation-contract';
import { withAuditLedger } from '../support/audit-ledger';
import { countingClickHouse } from '../support/counting-clickhouse';
import { orgIs, waitForStoredCount } from '../support/stored-count';
import { startTestStack, type TestStack } from '../support/test-stack';

/**
 * An automation run plans its actions once and previews the mitigations it
 * planned: on the tests' ClickHouse (chDB, the one session a process has),
 * the fingerprint's two statements and two per previewed action, and the
 * preview of the rule announced even when the flows stored since would
 * fingerprint another.
 */
describe("an automation run's previews", () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack('chdb', { ROLES: 'api,stream-workers' });
  });
  afterAll(() => t.stop());

  const previewMinutes = 5;
  const syn = (i: number) => ({ src_ip: `203.0.113.${i + 1}`, src_port: 40_000 + i, protocol: 'tcp', dst_port: 80, bytes: 60, packets: 1, tcp_flags: 0x02 });
  const dns = (i: number) => ({ src_ip: `192.0.2.${i + 1}`, src_port: 53, protocol: 'udp', dst_port: 53, bytes: 1_000, packets: 10, tcp_flags: 0 });

  /** Stores flows towards `to`, half a minute older than `now`, and waits until the workspace holds `total` flows. */
  async function store(key: string, orgId: string, to: string, flows: Array<Record<string, unknown>>, total: number, now = Date.now()): Promise<void> {
    const body = flows.map((f) => ({ ...f, dst_ip: to, timestamp: now - 30_000 }));
    expect((await t.request('POST', '/flow', { key, body })).status).toBe(201);
    await waitForStoredCount(t.stack.clickhouse, 'flows', total, { where: orgIs(orgId), what: 'the flows stored' });
  }

  /** A workspace's incident on `to` with a policy stored; a run of `actions` on it, whose flow statements are counted; `now` is the activities' clock. */
  async function runOn(to: string, actions: ActionSpec[], requiresApproval: boolean, now = Date.now()) {
    const key = await t.mintKey({ role: 'operator' });
    const org = key.org_id;
    const incident = {
      ...{ id: 'inc_x', org_id: org, service: to, environment: 'production', region: 'eu', severity: 'critical' as const, state: 'open' as const },
      ...{ source: 'deterministic_engine' as const, rule: 'signal', escalations: [], first_seen: now, last_seen: now, signal_count: 1, kinds: ['bgp' as const] },
      ...{ max_latency_ms: 0, total_bytes: 0, version: 1, rules_version: 1 },
    };
    await new IncidentsRepo(t.stack.clickhouse).write([{ incident, superseded: false }], now);
    const policy: StoredPolicy = {
      ...{ id: `pol_${randomBytes(4).toString('hex')}`, org_id: org, name: 'gate', requires_approval: requiresApproval, allow_execution: true, environments: [], severities: [] },
      ...{ max_window_minutes: 0, approval_timeout_minutes: 60, status: 'active', created_at: now, updated_at: now, version: 1 },
      ...noMitigationBounds,
    };
    await new PoliciesRepo(t.stack.clickhouse).put(policy);
    const input: AutomationInput = {
      ...{ orgId: org, automationId: automationIdOf(org, randomId('inc'), 'fp', 1), incidentId: 'inc_x', playbookId: 'fp', playbookVersion: 1 },
      ...{ requestedBy: key.key_id, requestedAt: now },
    };
    // Every statement the planner sends, by what it reads of the stored flows.
    const ch = t.stack.clickhouse;
    const { ch: counted, statements } = countingClickHouse(ch);
    const isShapes = (sql: string) => sql.includes('GROUP BY protocol, sp, dp, f, size');
    const flowStatements = {
      /** flowShapes' statements (a fingerprint: the attack and its baseline), and previewVolumes' (two an action). */
      counts: () => ({ shapes: statements.filter(isShapes).length, previews: statements.filter((s) => /\.flows\s+WHERE/.test(s) && !isShapes(s)).length }),
      reset: () => void statements.splice(0),
    };
    const activitiesWith = <R,>(work: (run: ReturnType<typeof createAutomationActivities>) => Promise<R>) =>
      withAuditLedger(t, (audit, heads) =>
        work(
          createAutomationActivities({
            ...{ keys: new KeysRepo(ch), decisionTokens: new DecisionTokens(t.stack.config.decisions.signingKey!), audit, heads, registry: t.stack.registry },
            ...{ clickhouse: counted, blackholeNextHop: t.stack.config.bgp.blackholeNextHop, operatorBounds: t.stack.config.bgp.allowed },
            ...{ incidents: new IncidentsRepo(ch), policies: new PoliciesRepo(ch), automations: new AutomationsRepo(ch) },
            approvedPrefixes: () => Promise.resolve(['198.51.100.0/24']),
            playbookActions: () => Promise.resolve(actions),
            withLock: (_name, work) => work(),
            previewMinutes,
            now: () => now,
          }),
        ),
      );
    return { key: key.key, org, input, flowStatements, activitiesWith };
  }

  test('a fingerprint planned, announced and previewed afterwards shows the preview of its rule, though the flows stored since would fingerprint another', async () => {
    const to = '198.51.100.20';
    const run = await runOn(to, [{ type: 'flowspec_fingerprint', duration_minutes: 15 }], false);
    await store(run.key, run.org, to, Array.from({ length: 40 }, (_, i) => syn(i)), 40);
    const prepared = await run.activitiesWith((a) => a.prepareAutomation(run.input));
    expect(prepared.decision.decision).toBe('allow');
    const rule = { destination: `${to}/32`, protocols: [6], destinationPorts: [80], tcpFlags: ['syn'], packetLength: { min: 60, max: 60 } };
    expect(prepared.actions).toEqual([expect.objectContaining({ mitigation: { action: 'flowspec_discard', match: rule }, preview: null })]);
    // After the rule was planned, a heavier UDP flood: a fingerprint taken now would be a rule on it.
    await store(run.key, run.org, to, Array.from({ length: 100 }, (_, i) => dns(i)), 140);
    run.flowStatements.reset();
    const previewed = await run.activitiesWith((a) => a.previewAutomation({ input: run.input, actions: prepared.actions }));
    const seconds = previewMinutes * 60;
    expect(previewed[0]).toMatchObject({
      mitigation: { action: 'flowspec_discard', match: rule },
      preview: { matched_bits_per_second: Math.round((40 * 60 * 8) / seconds), share: (40 * 60) / (40 * 60 + 100 * 1_000), approximate: false },
    });
    // The preview reads the flows its rule matches and nothing else: no playbook, no second fingerprint.
    expect(run.flowStatements.counts()).toEqual({ shapes: 0, previews: 2 });
  });

  test('a run that waits for approval fingerprints once and previews each of its mitigations once: 2 fingerprint statements and 2 a previewed action', async () => {
    const to = '198.51.100.21';
    const actions: ActionSpec[] = [{ type: 'flowspec_fingerprint', duration_minutes: 15 }, { type: 'blackhole', duration_minutes: 15, next_hop: null }, { type: 'webhook' }];
    const run = await runOn(to, actions, true);
    await store(run.key, run.org, to, Array.from({ length: 40 }, (_, i) => syn(i)), 40);
    const prepared = await run.activitiesWith((a) => a.prepareAutomation(run.input));
    expect(prepared.decision.decision).toBe('approval_required');
    // The approvers read the preview of the rules planned: the fingerprint's matches every SYN, the blackhole everything.
    expect(prepared.actions.map((a) => a.preview && { share: a.preview.share })).toEqual([{ share: 1 }, { share: 1 }, null]);
    expect(run.flowStatements.counts()).toEqual({ shapes: 2, previews: 4 });
  });

  test("a run's fingerprint reads the attack in the last minutes of the activities' clock, the same minutes its previews read", async () => {
    const to = '198.51.100.22';
    const anHourAgo = Date.now() - 3_600_000;
    const run = await runOn(to, [{ type: 'flowspec_fingerprint', duration_minutes: 15 }], false, anHourAgo);
    await store(run.key, run.org, to, Array.from({ length: 40 }, (_, i) => syn(i)), 40, anHourAgo);
    const prepared = await run.activitiesWith((a) => a.prepareAutomation(run.input));
    expect(prepared.decision.decision).toBe('allow');
    expect(prepared.actions.map((a) => a.mitigation?.action)).toEqual(['flowspec_discard']);
  });
});
