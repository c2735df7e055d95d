import type { StoredPolicy } from './mitigation-policy';
import type { Playbook } from './playbooks';

/**
 * Guardrails and what loosens them (issue 32, item 4). A workspace's
 * guardrails are its policies (every active one applies to every run) and
 * the playbooks they hold back. One person must not be able to take them
 * away alone: with the workspace's `four_eyes` on, a change that loosens one
 * waits for a second person, as a run does. Tightening never waits.
 */

/** What changing a limit from `before` to `after` does, where 0 stands for no limit at all. */
const widensLimit = (before: number, after: number) => before > 0 && (after === 0 || after > before);

/** Whether `after` lets through something `before` held back; [] stands for "any". */
const widensList = (before: readonly string[], after: readonly string[]) => before.length > 0 && (after.length === 0 || after.some((v) => !before.includes(v)));

/**
 * Why a change of an active policy from `before` to `after` loosens it: one
 * sentence per boundary it relaxes; [] when it only tightens or keeps it.
 */
export function policyLoosening(before: StoredPolicy, after: StoredPolicy): string[] {
  const reasons: string[] = [];
  if (before.status === 'active' && after.status !== 'active') reasons.push('the policy is deactivated');
  if (before.requires_approval && !after.requires_approval) reasons.push('runs no longer wait for an approver');
  if (!before.allow_execution && after.allow_execution) reasons.push('execution is allowed');
  if (widensList(before.environments, after.environments)) reasons.push('more environments are allowed');
  if (widensList(before.severities, after.severities)) reasons.push('more severities are allowed');
  if (widensList(before.allowed_actions, after.allowed_actions)) reasons.push('more mitigation actions are allowed');
  if (widensLimit(before.max_window_minutes, after.max_window_minutes)) reasons.push('a longer replay window is allowed');
  if (widensLimit(before.max_duration_minutes, after.max_duration_minutes)) reasons.push('longer mitigations are allowed');
  if (widensLimit(before.max_active_mitigations, after.max_active_mitigations)) reasons.push('more mitigations may be active at once');
  if (after.min_prefix_length_v4 < before.min_prefix_length_v4) reasons.push('wider IPv4 destinations are allowed');
  if (after.min_prefix_length_v6 < before.min_prefix_length_v6) reasons.push('wider IPv6 destinations are allowed');
  return reasons;
}

/** Whether a run of the workspace waits for an approver: some active policy requires one (every active policy applies to every run). */
export const gated = (policies: readonly Pick<StoredPolicy, 'status' | 'requires_approval'>[]): boolean =>
  policies.some((p) => p.status === 'active' && p.requires_approval);

/** Whether a workspace with these playbooks and policies acts with nobody deciding: an enabled playbook, and no policy that gates it. */
export const ungated = (playbooks: readonly Pick<Playbook, 'enabled'>[], policies: readonly Pick<StoredPolicy, 'status' | 'requires_approval'>[]): boolean =>
  playbooks.some((p) => p.enabled) && !gated(policies);

/**
 * Why replacing the playbooks `before` with `after` loosens the guardrails:
 * it enables a playbook (new, changed or re-enabled) that no policy gates.
 */
export function playbooksLoosening(before: readonly Playbook[], after: readonly Playbook[], policies: readonly Pick<StoredPolicy, 'status' | 'requires_approval'>[]): string[] {
  if (gated(policies)) return [];
  const was = new Map(before.map((p) => [p.id, JSON.stringify(p)]));
  const enabled = after.filter((p) => p.enabled && was.get(p.id) !== JSON.stringify(p));
  return enabled.map((p) => `playbook ${p.id} acts with no policy gating it: nobody decides its runs`);
}
