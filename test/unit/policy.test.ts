import { evaluatePolicies, type Policy } from '../../core/policy';

const policy = (over: Partial<Policy>): Policy => ({
  id: 'pol_a', org_id: 'org', name: 'p', requires_approval: false, allow_execution: true, environments: [], severities: [],
  max_window_minutes: 0, approval_timeout_minutes: 60, status: 'active', created_at: 0, updated_at: 0, version: 1, ...over,
});
const target = { environment: 'prod', severity: 'high' as const, window_minutes: 30 };

describe('policy evaluation', () => {
  test('no policy allows execution', () => {
    expect(evaluatePolicies([], target)).toEqual({ decision: 'allow', policies: [] });
  });

  test('allow_execution false denies, naming the policy', () => {
    expect(evaluatePolicies([policy({ allow_execution: false, name: 'freeze' })], target)).toMatchObject({
      decision: 'deny', policy_id: 'pol_a', policy_name: 'freeze',
    });
  });

  test('an environment outside the boundary denies', () => {
    expect(evaluatePolicies([policy({ environments: ['staging'] })], target).decision).toBe('deny');
    expect(evaluatePolicies([policy({ environments: ['prod'] })], target).decision).toBe('allow');
  });

  test('a severity outside the boundary denies', () => {
    expect(evaluatePolicies([policy({ severities: ['critical'] })], target).decision).toBe('deny');
  });

  test('a window longer than the maximum denies', () => {
    expect(evaluatePolicies([policy({ max_window_minutes: 10 })], target).decision).toBe('deny');
  });

  test('requires_approval waits with the shortest timeout of the requiring policies', () => {
    const d = evaluatePolicies([policy({ id: 'pol_1', requires_approval: true, approval_timeout_minutes: 30 }), policy({ id: 'pol_2', requires_approval: true, approval_timeout_minutes: 5 })], target);
    expect(d).toEqual({ decision: 'approval_required', policies: ['pol_1', 'pol_2'], timeout_minutes: 5 });
  });

  test('a denial wins over an approval requirement', () => {
    expect(evaluatePolicies([policy({ id: 'pol_1', requires_approval: true }), policy({ id: 'pol_2', allow_execution: false })], target).decision).toBe('deny');
  });

  test('inactive policies do not apply', () => {
    expect(evaluatePolicies([policy({ allow_execution: false, status: 'inactive' })], target).decision).toBe('allow');
  });
});
