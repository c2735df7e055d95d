import { conflict, notFound } from '../core/errors';
import { randomId } from '../core/ids';
import { noMitigationBounds, type MitigationAction, type StoredPolicy } from '../core/mitigation-policy';
import { defaultApprovalTimeoutMinutes, type Policy } from '../core/policy';
import type { PoliciesRepo } from '../storage/policies-repo';
import type { AuditLedger } from './audit-ledger';
import { policyLoosening } from '../core/guardrails';
import type { GuardrailService, HeldChange } from './guardrails/guardrail-service';

/** `approved`: a change a second person approved (application/guardrails), applied without being held again. */
export interface ChangeOptions {
  approved?: boolean;
}

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
  /** The mitigation bounds (core/mitigation-policy.ts); absent, null, 0 or []: no bound. */
  allowed_actions?: MitigationAction[];
  max_duration_minutes?: number | null;
  max_active_mitigations?: number | null;
  min_prefix_length_v4?: number;
  min_prefix_length_v6?: number;
}

/** The limits null removes. */
type NullableLimits = Pick<PolicyInput, 'max_window_minutes' | 'max_duration_minutes' | 'max_active_mitigations'>;

/** The limits a change sets: null is 0 (no limit), an absent one keeps its value. */
const limitsOf = (change: NullableLimits, previous: Pick<StoredPolicy, keyof NullableLimits>): Pick<StoredPolicy, keyof NullableLimits> => ({
  max_window_minutes: change.max_window_minutes === undefined ? previous.max_window_minutes : (change.max_window_minutes ?? 0),
  max_duration_minutes: change.max_duration_minutes === undefined ? previous.max_duration_minutes : (change.max_duration_minutes ?? 0),
  max_active_mitigations: change.max_active_mitigations === undefined ? previous.max_active_mitigations : (change.max_active_mitigations ?? 0),
});

/** A change to a policy: only the fields given change; `null` removes a limit (`max_window_minutes`, `max_duration_minutes`, `max_active_mitigations`). */
export type PolicyChange = Partial<PolicyInput>;

/**
 * Creates, changes and deactivates a workspace's policies; every change is
 * audited. A change that loosens a policy waits for a second person where the
 * workspace asks for four eyes on its guardrails (`guard`); creating one only
 * ever tightens (every active policy applies to every run).
 */
export class PolicyService {
  constructor(
    private readonly deps: { policies: PoliciesRepo; audit: AuditLedger; guard?: Pick<GuardrailService, 'holdIfLoosening' | 'auditIfUngated'>; now?: () => number },
  ) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  async create(orgId: string, actor: string, input: PolicyInput): Promise<StoredPolicy> {
    const now = this.now();
    const policy: StoredPolicy = {
      ...limitsOf(input, { max_window_minutes: 0, ...noMitigationBounds }),
      allowed_actions: input.allowed_actions ?? [],
      min_prefix_length_v4: input.min_prefix_length_v4 ?? 0,
      min_prefix_length_v6: input.min_prefix_length_v6 ?? 0,
      id: randomId('pol'),
      org_id: orgId,
      name: input.name,
      requires_approval: input.requires_approval,
      allow_execution: input.allow_execution ?? true,
      environments: input.environments ?? [],
      severities: input.severities ?? [],
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

  async get(orgId: string, id: string): Promise<StoredPolicy> {
    const policy = await this.deps.policies.get(orgId, id);
    if (!policy) throw notFound('policy');
    return policy;
  }

  async update(orgId: string, actor: string, id: string, change: PolicyChange, options: ChangeOptions = {}): Promise<StoredPolicy | HeldChange> {
    const policy = await this.activePolicy(orgId, id, 'an inactive policy cannot be changed');
    const updated: StoredPolicy = {
      ...policy,
      ...change,
      ...limitsOf(change, policy),
      updated_at: this.now(),
      version: policy.version + 1,
    };
    const reasons = policyLoosening(policy, updated);
    const held = options.approved ? undefined : await this.deps.guard?.holdIfLoosening(orgId, actor, { kind: 'policy.update', target: id, change, reasons });
    if (held) return held;
    await this.deps.policies.put(updated);
    await this.deps.audit.append({ orgId, actor, action: 'policy.update', target: id, details: { ...change } });
    if (reasons.length) await this.deps.guard?.auditIfUngated(orgId, actor);
    return updated;
  }

  async deactivate(orgId: string, actor: string, id: string, options: ChangeOptions = {}): Promise<StoredPolicy | HeldChange> {
    const policy = await this.activePolicy(orgId, id, 'the policy is already inactive');
    const inactive: StoredPolicy = { ...policy, status: 'inactive', updated_at: this.now(), version: policy.version + 1 };
    const reasons = policyLoosening(policy, inactive);
    const held = options.approved ? undefined : await this.deps.guard?.holdIfLoosening(orgId, actor, { kind: 'policy.deactivate', target: id, change: {}, reasons });
    if (held) return held;
    await this.deps.policies.put(inactive);
    await this.deps.audit.append({ orgId, actor, action: 'policy.deactivate', target: id });
    if (reasons.length) await this.deps.guard?.auditIfUngated(orgId, actor);
    return inactive;
  }

  list(orgId: string, opts: { status?: Policy['status']; limit: number; after?: { created_at: number; id: string } }): Promise<StoredPolicy[]> {
    return this.deps.policies.list(orgId, opts);
  }

  private async activePolicy(orgId: string, id: string, inactiveMessage: string): Promise<StoredPolicy> {
    const policy = await this.get(orgId, id);
    if (policy.status === 'inactive') throw conflict(inactiveMessage);
    return policy;
  }
}
