import { evaluateMitigation, prefixWithin, type MitigationPolicy, type MitigationTarget } from '../../core/mitigation-policy';

const policy = (over: Partial<MitigationPolicy> = {}): MitigationPolicy => ({
  id: 'pol_a',
  org_id: 'org_a',
  name: 'mitigations',
  requires_approval: false,
  allow_execution: true,
  environments: [],
  severities: [],
  max_window_minutes: 0,
  approval_timeout_minutes: 30,
  status: 'active',
  created_at: 0,
  updated_at: 0,
  version: 1,
  ...over,
});
const target = (over: Partial<MitigationTarget> = {}): MitigationTarget => ({
  environment: 'prod',
  severity: 'critical',
  action: 'blackhole',
  destination: '198.51.100.7/32',
  duration_minutes: 30,
  ...over,
});
const workspace = { approved_prefixes: ['198.51.100.0/24', '2001:db8:100::/48'], active: 0 };

describe('mitigation policy', () => {
  test('a mitigation inside an approved prefix, within every bound, is allowed', () => {
    expect(evaluateMitigation([policy({ max_duration_minutes: 60, max_active_mitigations: 5, min_prefix_length_v4: 24 })], target(), workspace)).toEqual({ decision: 'allow', policies: ['pol_a'] });
  });

  test('a destination outside every approved prefix is denied, even with no policy', () => {
    expect(evaluateMitigation([], target({ destination: '203.0.113.7/32' }), workspace)).toMatchObject({ decision: 'deny', reason: 'destination 203.0.113.7/32 is outside the workspace\'s approved prefixes' });
  });

  test('a destination wider than the approved prefix that holds its address is denied', () => {
    expect(evaluateMitigation([], target({ action: 'flowspec_discard', destination: '198.51.0.0/16' }), workspace)).toMatchObject({ decision: 'deny' });
  });

  test('a destination that is not a prefix is denied, naming it', () => {
    expect(evaluateMitigation([], target({ destination: '198.51.100.7/33' }), workspace)).toMatchObject({ decision: 'deny', reason: 'destination "198.51.100.7/33" is not an IP prefix' });
  });

  test('an action outside the policy\'s allowed actions is denied', () => {
    const decision = evaluateMitigation([policy({ allowed_actions: ['flowspec_rate_limit'] })], target(), workspace);
    expect(decision).toMatchObject({ decision: 'deny', policy_id: 'pol_a', reason: 'action blackhole is outside the policy\'s allowed actions' });
  });

  test('a mitigation longer than the policy\'s maximum duration is denied', () => {
    expect(evaluateMitigation([policy({ max_duration_minutes: 20 })], target(), workspace)).toMatchObject({ decision: 'deny', reason: 'a 30-minute mitigation exceeds the policy\'s 20 minutes' });
  });

  test('one mitigation more than the policy\'s maximum active is denied', () => {
    const bounded = [policy({ max_active_mitigations: 2 })];
    expect(evaluateMitigation(bounded, target(), { ...workspace, active: 1 })).toMatchObject({ decision: 'allow' });
    expect(evaluateMitigation(bounded, target(), { ...workspace, active: 2 })).toMatchObject({ decision: 'deny', reason: 'the workspace has 2 active mitigations, the policy\'s maximum is 2' });
  });

  test('a prefix wider than the policy\'s minimum length of its family is denied', () => {
    const bounded = [policy({ min_prefix_length_v4: 28, min_prefix_length_v6: 64 })];
    expect(evaluateMitigation(bounded, target({ action: 'flowspec_discard', destination: '198.51.100.0/24' }), workspace)).toMatchObject({ decision: 'deny', reason: 'a /24 is wider than the policy\'s minimum prefix length /28' });
    expect(evaluateMitigation(bounded, target({ destination: '2001:db8:100::1/128' }), workspace)).toMatchObject({ decision: 'allow' });
    expect(evaluateMitigation(bounded, target({ action: 'flowspec_discard', destination: '2001:db8:100::/56' }), workspace)).toMatchObject({ decision: 'deny' });
  });

  test('the policy fields replays obey apply too: a policy that needs approval makes the mitigation wait for one', () => {
    expect(evaluateMitigation([policy({ requires_approval: true })], target(), workspace)).toEqual({ decision: 'approval_required', policies: ['pol_a'], timeout_minutes: 30 });
    expect(evaluateMitigation([policy({ environments: ['staging'] })], target(), workspace)).toMatchObject({ decision: 'deny' });
  });

  test('an inactive policy bounds nothing', () => {
    expect(evaluateMitigation([policy({ status: 'inactive', max_duration_minutes: 1 })], target(), workspace)).toEqual({ decision: 'allow', policies: [] });
  });

  test('prefix containment holds within one family only', () => {
    expect(prefixWithin('198.51.100.128/25', '198.51.100.0/24')).toBe(true);
    expect(prefixWithin('198.51.100.0/24', '198.51.100.0/24')).toBe(true);
    expect(prefixWithin('198.51.101.0/24', '198.51.100.0/24')).toBe(false);
    expect(prefixWithin('::ffff:198.51.100.7/128', '198.51.100.0/24')).toBe(false);
    expect(prefixWithin('2001:db8:100:1::/64', '2001:db8:100::/48')).toBe(true);
  });
});
