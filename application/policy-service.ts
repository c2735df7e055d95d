import { conflict, notFound } from '../core/errors';
import { randomId } from '../core/ids';
import { defaultApprovalTimeoutMinutes, type Policy } from '../core/policy';
import type { PoliciesRepo } from '../storage/policies-repo';
import type { AuditLedger } from './audit-ledger';

/** What a policy is created with; the boundaries are optional. */
export interface PolicyInput {
  name: string;
  requires_approval: boolean;
  environments?: string[];
  severities?: Policy['severities'];
  allow_execution?: boolean;
  /** null or absent: no limit. */
  max_window_minutes?: number | null;
  approval_timeout_minutes?: number;
}

/** A change to a policy: only the fields given change; `max_window_minutes: null` removes the limit. */
export type PolicyChange = Partial<PolicyInput>;

/** Creates, changes and deactivates a workspace's policies; every change is audited. */
export class PolicyService {
  constructor(private readonly deps: { policies: PoliciesRepo; audit: AuditLedger; now?: () => number }) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  async create(orgId: string, actor: string, input: PolicyInput): Promise<Policy> {
    const now = this.now();
    const policy: Policy = {
      id: randomId('pol'),
      org_id: orgId,
      name: input.name,
      requires_approval: input.requires_approval,
      allow_execution: input.allow_execution ?? true,
      environments: input.environments ?? [],
      severities: input.severities ?? [],
      max_window_minutes: input.max_window_minutes ?? 0,
      approval_timeout_minutes: input.approval_timeout_minutes ?? defaultApprovalTimeoutMinutes,
      status: 'active',
      created_at: now,
      updated_at: now,
      version: 1,
    };
    await this.deps.policies.put(policy);
    await this.deps.audit.append({ orgId, actor, action: 'policy.create', target: policy.id, details: { ...input } });
    return policy;
  }

  async get(orgId: string, id: string): Promise<Policy> {
    const policy = await this.deps.policies.get(orgId, id);
    if (!policy) throw notFound('policy');
    return policy;
  }

  async update(orgId: string, actor: string, id: string, change: PolicyChange): Promise<Policy> {
    const policy = await this.activePolicy(orgId, id, 'an inactive policy cannot be changed');
    const updated: Policy = {
      ...policy,
      ...change,
      max_window_minutes: change.max_window_minutes === undefined ? policy.max_window_minutes : (change.max_window_minutes ?? 0),
      updated_at: this.now(),
      version: policy.version + 1,
    };
    await this.deps.policies.put(updated);
    await this.deps.audit.append({ orgId, actor, action: 'policy.update', target: id, details: { ...change } });
    return updated;
  }

  async deactivate(orgId: string, actor: string, id: string): Promise<Policy> {
    const policy = await this.activePolicy(orgId, id, 'the policy is already inactive');
    const inactive: Policy = { ...policy, status: 'inactive', updated_at: this.now(), version: policy.version + 1 };
    await this.deps.policies.put(inactive);
    await this.deps.audit.append({ orgId, actor, action: 'policy.deactivate', target: id });
    return inactive;
  }

  list(orgId: string, opts: { status?: Policy['status']; limit: number; after?: { created_at: number; id: string } }): Promise<Policy[]> {
    return this.deps.policies.list(orgId, opts);
  }

  private async activePolicy(orgId: string, id: string, inactiveMessage: string): Promise<Policy> {
    const policy = await this.get(orgId, id);
    if (policy.status === 'inactive') throw conflict(inactiveMessage);
    return policy;
  }
}
