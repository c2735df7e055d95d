import { gated, playbooksLoosening, policyLoosening, ungated } from '../../core/guardrails';
import { noMitigationBounds, type StoredPolicy } from '../../core/mitigation-policy';
import type { Playbook } from '../../core/playbooks';

/** What loosens a guardrail (issue 32, item 4): tightening never waits for a second person, loosening does. */
const policy = (over: Partial<StoredPolicy> = {}): StoredPolicy => ({
  ...noMitigationBounds,
  allowed_actions: ['blackhole'],
  min_prefix_length_v4: 24,
  min_prefix_length_v6: 48,
  id: 'pol_1',
  org_id: 'org_a',
  name: 'gate',
  requires_approval: true,
  allow_execution: true,
  environments: ['prod'],
  severities: [],
  max_window_minutes: 60,
  approval_timeout_minutes: 60,
  status: 'active',
  created_at: 0,
  updated_at: 0,
  version: 1,
  ...over,
});

const playbook = (id: string, enabled = true): Playbook => ({ id, name: id, enabled, match: { rules: [], severities: [], services: [], environments: [], destinations: [] }, actions: [{ type: 'webhook' }] }) as unknown as Playbook;

describe('loosening a guardrail', () => {
  test('deactivating, dropping the approval, allowing execution or widening a bound loosens a policy', () => {
    expect(policyLoosening(policy(), policy({ status: 'inactive' }))).toEqual(['the policy is deactivated']);
    expect(policyLoosening(policy(), policy({ requires_approval: false }))).toEqual(['runs no longer wait for an approver']);
    expect(policyLoosening(policy({ allow_execution: false }), policy())).toEqual(['execution is allowed']);
    expect(policyLoosening(policy(), policy({ environments: [] }))).toEqual(['more environments are allowed']);
    expect(policyLoosening(policy(), policy({ environments: ['prod', 'staging'] }))).toEqual(['more environments are allowed']);
    expect(policyLoosening(policy(), policy({ max_window_minutes: 0 }))).toEqual(['a longer replay window is allowed']);
    expect(policyLoosening(policy(), policy({ allowed_actions: [] }))).toEqual(['more mitigation actions are allowed']);
    expect(policyLoosening(policy(), policy({ min_prefix_length_v4: 8 }))).toEqual(['wider IPv4 destinations are allowed']);
  });

  test('narrowing or tightening a policy loosens nothing', () => {
    expect(policyLoosening(policy({ environments: [] }), policy({ environments: ['prod'] }))).toEqual([]);
    expect(policyLoosening(policy({ requires_approval: false }), policy())).toEqual([]);
    expect(policyLoosening(policy(), policy({ max_window_minutes: 30, min_prefix_length_v4: 28, name: 'renamed' }))).toEqual([]);
  });

  test('a playbook enabled (new, changed or re-enabled) with no policy gating it loosens; with a gate, or disabled, it does not', () => {
    expect(playbooksLoosening([], [playbook('a')], [])).toEqual([expect.stringContaining('playbook a acts with no policy gating it')]);
    expect(playbooksLoosening([playbook('a', false)], [playbook('a')], [policy({ requires_approval: false })])).toHaveLength(1);
    expect(playbooksLoosening([playbook('a')], [playbook('a')], [])).toEqual([]);
    expect(playbooksLoosening([], [playbook('a', false)], [])).toEqual([]);
    expect(playbooksLoosening([], [playbook('a')], [policy()])).toEqual([]);
  });

  test('a workspace is ungated when an enabled playbook acts and no active policy requires an approver', () => {
    expect(gated([policy({ status: 'inactive' })])).toBe(false);
    expect(ungated([playbook('a')], [policy({ status: 'inactive' })])).toBe(true);
    expect(ungated([playbook('a')], [policy()])).toBe(false);
    expect(ungated([playbook('a', false)], [])).toBe(false);
  });
});
