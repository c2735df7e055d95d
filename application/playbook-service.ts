import { personActing } from './acting-person';
import { notFound, validationError, type ErrorDetail } from '../core/errors';
import { prefixWithin, type StoredPolicy } from '../core/mitigation-policy';
import { noPlaybooks, outsideOperatorBounds, type OperatorBounds, type Playbook, type PlaybooksDocument, type VersionedPlaybooks } from '../core/playbooks';
import type { PlaybooksRepo } from '../storage/playbooks-repo';
import type { PoliciesRepo } from '../storage/policies-repo';
import type { AuditLedger } from './audit-ledger';
import type { WithLock } from './exporter-service';
import { putNextVersion, sameDocument } from './versioned-document';
import { playbooksLoosening } from '../core/guardrails';
import type { GuardrailService, HeldChange } from './guardrails/guardrail-service';

/** The destinations no approved prefix of the workspace holds, as error details naming each. */
function outsideApproved(playbooks: readonly Playbook[], approved: readonly string[]): ErrorDetail[] {
  return playbooks.flatMap((p, i) =>
    p.match.destinations.flatMap((destination, j) =>
      approved.some((prefix) => prefixWithin(destination, prefix))
        ? []
        : [{ path: `playbooks.${i}.match.destinations.${j}`, message: `${destination} is outside the workspace's approved prefixes` }],
    ),
  );
}

/** The actions longer than the shortest `max_duration_minutes` of the active policies, as error details naming each. */
function overPolicyDuration(playbooks: readonly Playbook[], policies: readonly Pick<StoredPolicy, 'id' | 'name' | 'max_duration_minutes' | 'status'>[]): ErrorDetail[] {
  const bounding = policies.filter((p) => p.status === 'active' && p.max_duration_minutes > 0);
  if (!bounding.length) return [];
  const tightest = bounding.reduce((a, b) => (b.max_duration_minutes < a.max_duration_minutes ? b : a));
  return playbooks.flatMap((p, i) =>
    p.actions.flatMap((action, j) =>
      'duration_minutes' in action && action.duration_minutes > tightest.max_duration_minutes
        ? [{ path: `playbooks.${i}.actions.${j}.duration_minutes`, message: `${action.duration_minutes} minutes exceeds policy ${tightest.id} (${tightest.name}): at most ${tightest.max_duration_minutes}` }]
        : [],
    ),
  );
}

/**
 * Reads and sets a workspace's playbooks, versioned like detection rules: a
 * change writes the next version of the whole document (under a lock shared
 * by every API process, so two changes never take one number) and is
 * audited as `playbooks.update`; a document equal to the one in force writes
 * nothing. A playbook may name only destinations within the workspace's
 * approved prefixes (which the platform admin sets).
 */
export class PlaybookService {
  constructor(
    private readonly deps: {
      repo: PlaybooksRepo;
      audit: AuditLedger;
      withLock: WithLock;
      /** The prefixes the platform admin approved for the workspace (CIDR). */
      approvedPrefixes: (orgId: string) => Promise<string[]>;
      /** The workspace's active policies: an action may not last longer than one of them allows. */
      policies: Pick<PoliciesRepo, 'active'>;
      /** The communities and next hops the operator lets a blackhole carry. */
      operatorBounds: OperatorBounds;
      /** Holds a change that enables a playbook no policy gates, where the workspace asks for four eyes on its guardrails. */
      guard?: Pick<GuardrailService, 'holdIfLoosening' | 'auditIfUngated'>;
      now?: () => number;
    },
  ) {}

  /** The playbooks in force: version 0, none, when none were ever set. */
  async get(orgId: string): Promise<VersionedPlaybooks> {
    return (await this.deps.repo.latest(orgId)) ?? noPlaybooks;
  }

  /** One version; 0 is the empty document every workspace starts with. */
  async version(orgId: string, version: number): Promise<VersionedPlaybooks> {
    if (version === 0) return noPlaybooks;
    const found = await this.deps.repo.version(orgId, version);
    if (!found) throw notFound('playbooks version');
    return found;
  }

  /**
   * `startedFrom`: the version the caller edited; another one in force means
   * a concurrent change, 409. `approved`: a second person approved it (held
   * before), so it is not held again.
   */
  async put(orgId: string, actor: string, document: PlaybooksDocument, startedFrom?: number, approved = false): Promise<VersionedPlaybooks | HeldChange> {
    const [prefixes, policies] = await Promise.all([this.deps.approvedPrefixes(orgId), this.deps.policies.active(orgId)]);
    const outside = outsideApproved(document.playbooks, prefixes);
    if (outside.length) throw validationError('a playbook names a destination outside the approved prefixes', outside);
    const steering = outsideOperatorBounds(document.playbooks, this.deps.operatorBounds);
    if (steering.length) throw validationError('a blackhole carries a community or next hop the operator does not allow', steering);
    const tooLong = overPolicyDuration(document.playbooks, policies);
    if (tooLong.length) throw validationError("a playbook action lasts longer than a policy's max_duration_minutes", tooLong);
    const reasons = this.deps.guard ? playbooksLoosening((await this.get(orgId)).playbooks, document.playbooks, policies) : [];
    const held = approved ? undefined : await this.deps.guard?.holdIfLoosening(orgId, actor, { kind: 'playbooks.update', target: 'playbooks', change: { ...document, startedFrom }, reasons });
    if (held) return held;
    const written = await this.write(orgId, actor, document, startedFrom);
    if (reasons.length) await this.deps.guard?.auditIfUngated(orgId, actor);
    return written;
  }

  private write(orgId: string, actor: string, document: PlaybooksDocument, startedFrom: number | undefined): Promise<VersionedPlaybooks> {
    const now = this.deps.now ?? Date.now;
    return putNextVersion(this.deps, { orgId, actor, startedFrom }, {
      name: 'the playbooks',
      lock: `playbooks-${orgId}`,
      current: () => this.get(orgId),
      sameAs: (current) => sameDocument(current.playbooks, document.playbooks),
      write: async (version) => {
        // The person behind the request's credential writes the version: its automation runs' four-eyes rule names them.
        const next: VersionedPlaybooks = { version, playbooks: document.playbooks, created_at: now(), actor, actor_person: personActing(actor) ?? null };
        await this.deps.repo.put(orgId, next);
        return next;
      },
      audit: { action: 'playbooks.update', details: (written) => ({ playbooks: written.playbooks.map((p) => p.id) }) },
    });
  }
}
