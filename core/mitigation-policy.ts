import { BlockList, isIP } from 'node:net';
import { evaluatePolicies, type ExecutionTarget, type Policy, type PolicyDecision } from './policy';

/**
 * What bounds a mitigation beyond a replay's policy fields: a pure function
 * of the workspace's policies, the prefixes the platform admin approved for
 * it, what it has active now, and the mitigation asked for. The automation
 * run evaluates it before it waits for approval, and again before it
 * announces (an extension is a new decision under the same rules).
 *
 * | bound | effect |
 * |---|---|
 * | the workspace's approved prefixes | a destination outside every one is denied, whatever the policies say |
 * | allowed_actions: [...] | another action is denied |
 * | max_duration_minutes | a longer mitigation (or extension) is denied |
 * | max_active_mitigations | one more than this active at once is denied |
 * | min_prefix_length_v4 / _v6 | a wider destination (say a /8) is denied |
 */
export const mitigationActions = ['blackhole', 'flowspec_discard', 'flowspec_rate_limit'] as const;
export type MitigationAction = (typeof mitigationActions)[number];

/** A policy's mitigation bounds; 0 or an empty list: no bound. */
export interface MitigationBounds {
  allowed_actions: MitigationAction[];
  max_duration_minutes: number;
  max_active_mitigations: number;
  min_prefix_length_v4: number;
  min_prefix_length_v6: number;
}

export type MitigationPolicy = Policy & Partial<MitigationBounds>;

/** A policy as stored (storage/policies-repo.ts): every bound present, 0 or [] when unset. */
export type StoredPolicy = Policy & MitigationBounds;

/** The bounds of a policy that sets none. */
export const noMitigationBounds: Readonly<MitigationBounds> = {
  allowed_actions: [],
  max_duration_minutes: 0,
  max_active_mitigations: 0,
  min_prefix_length_v4: 0,
  min_prefix_length_v6: 0,
};

export interface MitigationTarget extends Pick<ExecutionTarget, 'environment' | 'severity'> {
  action: MitigationAction;
  /** The prefix the mitigation acts on (CIDR): a blackhole's host route, a flowspec rule's destination. */
  destination: string;
  duration_minutes: number;
}

export interface WorkspaceMitigations {
  /** The prefixes the platform admin approved for the workspace (CIDR). */
  approved_prefixes: readonly string[];
  /** Mitigations of the workspace active now, this one not counted. */
  active: number;
}

/** A prefix as its family, its network's address and its length; undefined when it is not one. */
export function parsePrefix(text: string): { family: 'ipv4' | 'ipv6'; address: string; length: number } | undefined {
  const [address, lengthText, ...rest] = text.split('/');
  if (rest.length || !address || !lengthText || !/^\d{1,3}$/.test(lengthText)) return undefined;
  const version = isIP(address);
  const length = Number(lengthText);
  if (version === 0 || length > (version === 4 ? 32 : 128)) return undefined;
  return { family: version === 4 ? 'ipv4' : 'ipv6', address, length };
}

/** Whether `inner` lies wholly within `outer` (both CIDR, the same family). */
export function prefixWithin(inner: string, outer: string): boolean {
  const a = parsePrefix(inner);
  const b = parsePrefix(outer);
  if (!a || !b || a.family !== b.family || a.length < b.length) return false;
  const list = new BlockList();
  list.addSubnet(b.address, b.length, b.family);
  return list.check(a.address, a.family);
}

/** The policies' decision on a mitigation: today's policy fields first, then the mitigation bounds; a denial names its reason. */
export function evaluateMitigation(policies: readonly MitigationPolicy[], target: MitigationTarget, workspace: WorkspaceMitigations): PolicyDecision {
  const destination = parsePrefix(target.destination);
  if (!destination) return deny(undefined, `destination ${JSON.stringify(target.destination)} is not an IP prefix`);
  if (!workspace.approved_prefixes.some((p) => prefixWithin(target.destination, p))) {
    return deny(undefined, `destination ${target.destination} is outside the workspace's approved prefixes`);
  }
  const decision = evaluatePolicies(policies, { environment: target.environment, severity: target.severity, window_minutes: 0 });
  if (decision.decision === 'deny') return decision;
  const active = [...policies].filter((p) => p.status === 'active').sort((a, b) => a.id.localeCompare(b.id));
  for (const p of active) {
    const reason = boundReason(p, target, destination, workspace);
    if (reason) return deny(p, reason);
  }
  return decision;
}

const deny = (p: Pick<Policy, 'id' | 'name'> | undefined, reason: string): PolicyDecision => ({
  decision: 'deny',
  policy_id: p?.id ?? 'workspace_prefixes',
  policy_name: p?.name ?? 'approved prefixes',
  reason,
});

function boundReason(p: MitigationPolicy, t: MitigationTarget, destination: { family: 'ipv4' | 'ipv6'; length: number }, w: WorkspaceMitigations): string | undefined {
  if (p.allowed_actions?.length && !p.allowed_actions.includes(t.action)) return `action ${t.action} is outside the policy's allowed actions`;
  if (p.max_duration_minutes && t.duration_minutes > p.max_duration_minutes) {
    return `a ${t.duration_minutes}-minute mitigation exceeds the policy's ${p.max_duration_minutes} minutes`;
  }
  if (p.max_active_mitigations && w.active + 1 > p.max_active_mitigations) {
    return `the workspace has ${w.active} active mitigations, the policy's maximum is ${p.max_active_mitigations}`;
  }
  const minLength = destination.family === 'ipv4' ? p.min_prefix_length_v4 : p.min_prefix_length_v6;
  if (minLength && destination.length < minLength) return `a /${destination.length} is wider than the policy's minimum prefix length /${minLength}`;
  return undefined;
}
