import { conflict, forbidden, notFound } from '../../core/errors';
import { ungated } from '../../core/guardrails';
import { randomId } from '../../core/ids';
import { samePerson } from '../../core/person';
import type { Principal } from '../../core/principal';
import type { GuardrailChange, GuardrailChangeKind, GuardrailSettings, GuardrailsRepo } from '../../storage/guardrails-repo';
import type { PlaybooksRepo } from '../../storage/playbooks-repo';
import type { PoliciesRepo } from '../../storage/policies-repo';
import { actingFor, personActing } from '../acting-person';
import type { AuditLedger } from '../audit-ledger';
import type { WithLock } from '../exporter-service';

/** A change the workspace holds for a second person instead of applying it. */
export interface HeldChange {
  held: GuardrailChange;
}

/** A change that may loosen a guardrail: what it is, and why it loosens one ([]: it does not). */
export interface GuardrailProposal {
  kind: GuardrailChangeKind;
  target: string;
  change: unknown;
  reasons: string[];
}

/** Applies an approved change as it was asked; run as its requester (application/acting-person.ts). */
export type GuardrailApplier = (change: GuardrailChange) => Promise<unknown>;

export const isHeld = (value: unknown): value is HeldChange => typeof value === 'object' && value !== null && 'held' in value;

/**
 * Guardrails with two pairs of eyes (docs/governance.md, "Guardrails"). With
 * the workspace's `four_eyes` on, a change that loosens a guardrail (a policy
 * deactivated or relaxed, a playbook enabled that no policy gates, the
 * setting itself turned off) is held, audited, and applied only when another
 * person approves it, as a run waits for one; tightening never waits. Off by
 * default: a workspace keeps one pair of eyes until it turns this on. Either
 * way, a change that leaves enabled playbooks with no policy gating them is
 * audited as `guardrail.ungated`.
 */
export class GuardrailService {
  private readonly appliers = new Map<GuardrailChangeKind, GuardrailApplier>();

  constructor(
    private readonly deps: {
      repo: GuardrailsRepo;
      audit: AuditLedger;
      withLock: WithLock;
      playbooks: Pick<PlaybooksRepo, 'latest'>;
      policies: Pick<PoliciesRepo, 'active'>;
      now?: () => number;
    },
  ) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  /** Names who applies each kind of change once approved (wired once, where the services are built). */
  applyWith(kind: GuardrailChangeKind, applier: GuardrailApplier): void {
    this.appliers.set(kind, applier);
  }

  settings(orgId: string): Promise<GuardrailSettings> {
    return this.deps.repo.settings(orgId);
  }

  /** Turning four eyes on applies at once; turning it off is itself a loosening, held while it is on. */
  async setFourEyes(orgId: string, actor: string, fourEyes: boolean): Promise<GuardrailSettings | HeldChange> {
    const reasons = fourEyes ? [] : ['loosening a guardrail would no longer wait for a second person'];
    const held = await this.holdIfLoosening(orgId, actor, { kind: 'guardrails.update', target: orgId, change: { four_eyes: fourEyes }, reasons });
    return held ?? this.writeSettings(orgId, actor, fourEyes);
  }

  private async writeSettings(orgId: string, actor: string, fourEyes: boolean): Promise<GuardrailSettings> {
    const { written, previous } = await this.deps.withLock(`guardrails-${orgId}`, async () => {
      const current = await this.deps.repo.settings(orgId);
      if (current.four_eyes === fourEyes) return { written: undefined, previous: current };
      const next: GuardrailSettings = { four_eyes: fourEyes, version: current.version + 1, updated_at: this.now(), actor };
      await this.deps.repo.putSettings(orgId, next);
      return { written: next, previous: current };
    });
    if (!written) return previous;
    await this.deps.audit.append({ orgId, actor, action: 'guardrails.update', target: orgId, details: { four_eyes: fourEyes, version: written.version } });
    return written;
  }

  /** Holds a loosening change while the workspace asks for four eyes; undefined: apply it now. */
  async holdIfLoosening(orgId: string, actor: string, proposal: GuardrailProposal): Promise<HeldChange | undefined> {
    if (proposal.reasons.length === 0 || !(await this.deps.repo.settings(orgId)).four_eyes) return undefined;
    const now = this.now();
    const held: GuardrailChange = {
      change_id: randomId('grc'),
      org_id: orgId,
      ...proposal,
      requested_by: actor,
      requested_by_person: personActing(actor) ?? null,
      requested_at: now,
      status: 'awaiting_approval',
      decided_by: '',
      decided_by_person: null,
      decided_at: 0,
      version: 1,
    };
    await this.deps.repo.put(held);
    await this.deps.audit.append({ orgId, actor, action: 'guardrail.change_requested', target: held.change_id, details: { kind: held.kind, target: held.target, reasons: held.reasons } });
    return { held };
  }

  /**
   * A second person decides a held change: not a service key, not its
   * requester with any credential. Approving applies it as its requester's
   * own change (their audit entries, their playbook version), then records
   * the decision.
   */
  async decide(orgId: string, by: Principal, changeId: string, decision: 'approve' | 'deny'): Promise<GuardrailChange> {
    const decided = await this.deps.withLock(`guardrail-change-${orgId}-${changeId}`, async () => {
      const change = await this.deps.repo.change(orgId, changeId);
      if (!change) throw notFound('guardrail change');
      if (change.status !== 'awaiting_approval') throw conflict(`the change is already ${change.status}`);
      if (!by.person) throw forbidden(`${by.keyId} is a service key: it stands for no person, and only a person may decide a change to the guardrails`);
      if (by.keyId === change.requested_by || samePerson(by.person, change.requested_by_person)) {
        throw forbidden('a change to the guardrails cannot be approved or denied by the person who asked for it, with any of their credentials');
      }
      if (decision === 'approve') await this.apply(change);
      const next: GuardrailChange = {
        ...change,
        status: decision === 'approve' ? 'approved' : 'denied',
        decided_by: by.keyId,
        decided_by_person: by.person,
        decided_at: this.now(),
        version: change.version + 1,
      };
      await this.deps.repo.put(next);
      return next;
    });
    await this.deps.audit.append({ orgId, actor: by.keyId, action: `guardrail.${decision}`, target: changeId, details: { kind: decided.kind, target: decided.target } });
    return decided;
  }

  private async apply(change: GuardrailChange): Promise<void> {
    if (change.kind === 'guardrails.update') {
      const { four_eyes } = change.change as { four_eyes: boolean };
      await actingFor(change.requested_by, change.requested_by_person, () => this.writeSettings(change.org_id, change.requested_by, four_eyes));
      return;
    }
    const applier = this.appliers.get(change.kind);
    if (!applier) throw new Error(`no applier for guardrail changes of kind ${change.kind}`);
    await actingFor(change.requested_by, change.requested_by_person, () => applier(change));
  }

  async get(orgId: string, changeId: string): Promise<GuardrailChange> {
    const change = await this.deps.repo.change(orgId, changeId);
    if (!change) throw notFound('guardrail change');
    return change;
  }

  list(orgId: string, opts: { status?: GuardrailChange['status']; limit: number }): Promise<GuardrailChange[]> {
    return this.deps.repo.list(orgId, opts);
  }

  /** Whether the workspace's enabled playbooks act with no policy gating them. */
  async isUngated(orgId: string): Promise<boolean> {
    const [playbooks, policies] = await Promise.all([this.deps.playbooks.latest(orgId), this.deps.policies.active(orgId)]);
    return ungated(playbooks?.playbooks ?? [], policies);
  }

  /** After a change to the policies or playbooks: a workspace it left ungated gets an audit entry saying so. */
  async auditIfUngated(orgId: string, actor: string): Promise<void> {
    if (!(await this.isUngated(orgId))) return;
    await this.deps.audit.append({ orgId, actor, action: 'guardrail.ungated', target: orgId, details: { message: 'enabled playbooks act with no active policy requiring an approver: nobody decides their runs' } });
  }

  /** The workspaces acting with nobody deciding, for the platform admin's /healthz. */
  ungatedWorkspaces(limit = 100): Promise<string[]> {
    return this.deps.repo.ungatedWorkspaces(limit);
  }
}
