import type { Severity } from './correlation';

/**
 * Governance policies and their evaluation: a pure function of a workspace's
 * active policies and what a replay would run on. Every active policy applies
 * to every execution of its workspace; its boundaries say where execution
 * may run.
 *
 * | field | effect |
 * |---|---|
 * | allow_execution: false | execution is denied (POLICY_DENIED) |
 * | environments: [...] | execution outside these environments is denied |
 * | severities: [...] | execution for incidents of other severities is denied |
 * | max_window_minutes | a replay window longer than this is denied |
 * | requires_approval: true | execution waits for an approver, up to approval_timeout_minutes (default 60), then expires |
 */
export interface Policy {
  id: string;
  org_id: string;
  name: string;
  requires_approval: boolean;
  allow_execution: boolean;
  environments: string[];
  severities: Severity[];
  /** 0: no limit. */
  max_window_minutes: number;
  approval_timeout_minutes: number;
  status: 'active' | 'inactive';
  created_at: number;
  updated_at: number;
  version: number;
}

export const defaultApprovalTimeoutMinutes = 60;

export interface ExecutionTarget {
  environment: string;
  severity: Severity;
  window_minutes: number;
}

export type PolicyDecision =
  | { decision: 'allow'; policies: string[] }
  | { decision: 'deny'; policy_id: string; policy_name: string; reason: string }
  | { decision: 'approval_required'; policies: string[]; timeout_minutes: number };

export function evaluatePolicies(policies: readonly Policy[], target: ExecutionTarget): PolicyDecision {
  const active = [...policies].filter((p) => p.status === 'active').sort((a, b) => a.id.localeCompare(b.id));
  for (const p of active) {
    const reason = denialReason(p, target);
    if (reason) return { decision: 'deny', policy_id: p.id, policy_name: p.name, reason };
  }
  const requiring = active.filter((p) => p.requires_approval);
  if (requiring.length) {
    return {
      decision: 'approval_required',
      policies: requiring.map((p) => p.id),
      timeout_minutes: Math.min(...requiring.map((p) => p.approval_timeout_minutes || defaultApprovalTimeoutMinutes)),
    };
  }
  return { decision: 'allow', policies: active.map((p) => p.id) };
}

function denialReason(p: Policy, t: ExecutionTarget): string | undefined {
  if (!p.allow_execution) return 'the policy does not allow execution';
  if (p.environments.length && !p.environments.includes(t.environment)) {
    return `environment ${t.environment} is outside the policy's environments`;
  }
  if (p.severities.length && !p.severities.includes(t.severity)) return `severity ${t.severity} is outside the policy's severities`;
  if (p.max_window_minutes && t.window_minutes > p.max_window_minutes) {
    return `a ${t.window_minutes}-minute window exceeds the policy's ${p.max_window_minutes} minutes`;
  }
  return undefined;
}

export const deniedMessage = (d: Extract<PolicyDecision, { decision: 'deny' }>) =>
  `Execution blocked by policy ${d.policy_id} (${d.policy_name}): ${d.reason}`;
