import { automationIdOf } from '../../application/automation-runs';
import { DecisionTokens } from '../../core/decision-token';
import { randomId } from '../../core/ids';
import { AutomationsRepo } from '../../storage/automations-repo';
import { IncidentsRepo } from '../../storage/incidents-repo';
import { KeysRepo } from '../../storage/keys-repo';
import { PoliciesRepo } from '../../storage/policies-repo';
import { PrefixesRepo } from '../../storage/prefixes-repo';
import { createAutomationActivities } from '../../workers/governance/activities/automation-activities';
import type { AuditEntryView, Page } from '../support/api-types';
import { withAuditLedger } from '../support/audit-ledger';
import { startTestStack, type TestStack } from '../support/test-stack';

/**
 * A Temporal activity may run again after its side effect landed (its attempt
 * timed out, or its worker died between the append and the completion). The
 * automation activities' audit entries are searched for before they are
 * appended, as a decision's are (governance-signals.test.ts), on the real
 * ledger: ClickHouse and the heads bucket in NATS.
 */
describe('automation audit entries under activity retries', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack('chdb', { ROLES: 'api' });
  });
  afterAll(async () => {
    await t.stop();
  });

  test('a withdrawal\'s entry appended again by its retried activity is written once', async () => {
    const operator = await t.mintKey({ role: 'operator' });
    const approver = await t.mintKey({ role: 'approver', orgId: operator.org_id });
    const ch = t.stack.clickhouse;
    const automationId = automationIdOf(operator.org_id, randomId('inc'), 'rtbh', 1);
    const input = { orgId: operator.org_id, automationId, incidentId: 'inc_unused', playbookId: 'rtbh', playbookVersion: 1, requestedBy: operator.key_id, requestedAt: Date.now() };
    const withdrawal = { input, ids: [`${automationId}-0`], at: Date.now(), reason: 'withdrawn' as const, by: approver.key_id, byPerson: approver.owner === 'service' ? null : approver.owner };
    await withAuditLedger(t, async (audit, heads) => {
      // No BGP speaker: a withdrawal only writes its entry, which is what a retry could double.
      const activities = createAutomationActivities({
        ...{ keys: new KeysRepo(ch), decisionTokens: new DecisionTokens(t.stack.config.decisions.signingKey!), audit, heads, registry: t.stack.registry },
        ...{ clickhouse: ch, blackholeNextHop: t.stack.config.bgp.blackholeNextHop, operatorBounds: t.stack.config.bgp.allowed },
        ...{ incidents: new IncidentsRepo(ch), policies: new PoliciesRepo(ch), automations: new AutomationsRepo(ch), approvedPrefixes: (orgId) => new PrefixesRepo(ch).approved(orgId) },
        playbookActions: () => Promise.resolve(undefined),
        withLock: (_name, work) => work(),
        previewMinutes: 5,
      });
      await activities.withdrawMitigations(withdrawal);
      await activities.withdrawMitigations(withdrawal);
    });
    const ledger = (await t.request<Page<AuditEntryView>>('GET', '/v1/audit?limit=1000', { key: operator.key })).body.data;
    const entries = ledger.filter((e) => e.target === automationId);
    expect(entries).toEqual([expect.objectContaining({ action: 'automation.withdraw', actor: approver.key_id })]);
  });
});
