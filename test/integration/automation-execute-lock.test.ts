import { randomBytes } from 'node:crypto';
import { automationIdOf } from '../../application/automation-runs';
import type { PlannedAction } from '../../core/automation-plan';
import { DecisionTokens } from '../../core/decision-token';
import { randomId } from '../../core/ids';
import { noMitigationBounds, type StoredPolicy } from '../../core/mitigation-policy';
import { createLogger } from '../../observability/logger';
import { AutomationsRepo } from '../../storage/automations-repo';
import { IncidentsRepo } from '../../storage/incidents-repo';
import { KeysRepo } from '../../storage/keys-repo';
import { PoliciesRepo } from '../../storage/policies-repo';
import { defaultLockConfig, Locks } from '../../streams/locks';
import { MitigationLedger } from '../../streams/mitigation-ledger';
import { createAutomationActivities, type AutomationActivityDeps } from '../../workers/governance/activities/automation-activities';
import { withAuditLedger } from '../support/audit-ledger';
import { startTestStack, type TestStack } from '../support/test-stack';

/**
 * An execution counts the workspace's active mitigations and writes its own
 * under the workspace's lock (streams/locks.ts, on the tests' nats-server;
 * the incident, the policies and the ledgers on the tests' engines too),
 * so two runs at once cannot both pass max_active_mitigations; the store's
 * reads, the speaker's pass and the audit entry stay outside it, so runs of
 * one workspace do not wait in a row for each other's reconciliation.
 */
describe('an automation run\'s execution under the workspace\'s lock', () => {
  let t: TestStack;
  let locks: Locks;
  let ledger: MitigationLedger;
  beforeAll(async () => {
    t = await startTestStack('chdb', { ROLES: 'api' });
    const prefix = `t${randomBytes(5).toString('hex')}`;
    locks = new Locks({ ...defaultLockConfig(prefix), retryMs: 20 }, t.stack.nats, createLogger('silent'));
    ledger = new MitigationLedger({ nats: t.stack.nats, prefix, replicas: 1, signingKey: randomBytes(32).toString('base64url') });
    await Promise.all([locks.start(), ledger.start()]);
  });
  afterAll(async () => {
    await Promise.all([locks.stop(), ledger.stop()]);
    await t.stop();
  });

  /** A policy of the workspace, stored: `max_active_mitigations` 0 bounds nothing. */
  async function storePolicy(org: string, maxActive: number): Promise<void> {
    const policy: StoredPolicy = {
      ...{ id: `pol_${randomBytes(4).toString('hex')}`, org_id: org, name: 'bounded', requires_approval: false, allow_execution: true, environments: [], severities: [] },
      ...{ max_window_minutes: 0, approval_timeout_minutes: 60, status: 'active', created_at: Date.now(), updated_at: Date.now(), version: 1 },
      ...noMitigationBounds,
      max_active_mitigations: maxActive,
    };
    await new PoliciesRepo(t.stack.clickhouse).put(policy);
  }

  /** A workspace with its incident and a policy stored; its activities over the real lock, ledgers and store. */
  async function workspace(maxActive = 1): Promise<string> {
    const org = `org_${randomBytes(4).toString('hex')}`;
    const now = Date.now();
    const incident = {
      ...{ id: 'inc_x', org_id: org, service: '198.51.100.1', environment: 'production', region: 'eu', severity: 'critical' as const, state: 'open' as const },
      ...{ source: 'deterministic_engine' as const, rule: 'signal', escalations: [], first_seen: now, last_seen: now, signal_count: 1, kinds: ['bgp' as const] },
      ...{ max_latency_ms: 0, total_bytes: 0, version: 1, rules_version: 1 },
    };
    await new IncidentsRepo(t.stack.clickhouse).write([{ incident, superseded: false }], now);
    await storePolicy(org, maxActive);
    return org;
  }

  function activities(audit: AutomationActivityDeps['audit'], heads: AutomationActivityDeps['heads'], extra: Partial<AutomationActivityDeps> = {}) {
    const ch = t.stack.clickhouse;
    return createAutomationActivities({
      ...{ keys: new KeysRepo(ch), decisionTokens: new DecisionTokens(t.stack.config.decisions.signingKey!), audit, heads, registry: t.stack.registry },
      ...{ clickhouse: ch, blackholeNextHop: t.stack.config.bgp.blackholeNextHop, operatorBounds: t.stack.config.bgp.allowed },
      incidents: new IncidentsRepo(ch),
      policies: new PoliciesRepo(ch),
      automations: new AutomationsRepo(ch),
      approvedPrefixes: () => Promise.resolve(['198.51.100.0/24']),
      playbookActions: () => Promise.resolve(undefined),
      mitigations: { ledger, reconcileNow: () => Promise.resolve() },
      withLock: (name, work) => locks.withLock(name, work),
      previewMinutes: 5,
      ...extra,
    });
  }

  const runOf = (org: string, address: string) => {
    const automationId = automationIdOf(org, randomId('inc'), 'rtbh', 1);
    const input = { orgId: org, automationId, incidentId: 'inc_x', playbookId: 'rtbh', playbookVersion: 1, requestedBy: 'key_operator', requestedAt: Date.now() };
    const destination = `${address}/32`;
    const action: PlannedAction = {
      id: `${automationId}-0`, type: 'blackhole', destination, duration_minutes: 5, preview: null,
      mitigation: { action: 'blackhole', destination, nextHop: t.stack.config.bgp.blackholeNextHop.ipv4 },
    };
    return { input, actions: [action], startsAt: Date.now() };
  };

  test('two runs of one workspace executed at once cannot both pass max_active_mitigations', async () => {
    const org = await workspace();
    const outcomes = await withAuditLedger(t, (audit, heads) => {
      const run = activities(audit, heads);
      return Promise.all([run.executeAutomation(runOf(org, '198.51.100.1')), run.executeAutomation(runOf(org, '198.51.100.2'))]);
    });
    expect(outcomes.filter((o) => 'actions' in o)).toHaveLength(1);
    const denials = outcomes.flatMap((o) => ('denied' in o ? [o.denied] : []));
    expect(denials).toHaveLength(1);
    expect(denials[0]).toContain("the policy's maximum is 1");
  });

  test('a workspace whose policies bound no count of active mitigations executes without the lock', async () => {
    const org = await workspace(0);
    let locked = 0;
    const outcome = await withAuditLedger(t, (audit, heads) => {
      const run = activities(audit, heads, {
        withLock: (name, work) => ((locked += 1), locks.withLock(name, work)),
      });
      return run.executeAutomation(runOf(org, '198.51.100.4'));
    });
    expect(outcome).toMatchObject({ actions: [{ destination: '198.51.100.4/32' }] });
    expect(locked).toBe(0);
  });

  test('an execution asks the speaker\'s pass and writes its audit entry after it released the workspace\'s lock', async () => {
    const org = await workspace();
    let held = 0;
    const seen: Array<{ step: string; held: number }> = [];
    await withAuditLedger(t, async (audit, heads) => {
      const appendToLedger = audit.append.bind(audit);
      const watchedAudit = Object.assign(Object.create(audit) as typeof audit, {
        append: (entry: Parameters<typeof audit.append>[0]) => (seen.push({ step: 'audit', held }), appendToLedger(entry)),
      });
      const run = activities(watchedAudit, heads, {
        withLock: async (name, work) => locks.withLock(name, async () => {
          held += 1;
          try {
            return await work();
          } finally {
            held -= 1;
          }
        }),
        mitigations: { ledger, reconcileNow: () => (seen.push({ step: 'reconcile', held }), Promise.resolve()) },
      });
      await run.executeAutomation(runOf(org, '198.51.100.3'));
    });
    expect(seen).toEqual([{ step: 'reconcile', held: 0 }, { step: 'audit', held: 0 }]);
  });
});
