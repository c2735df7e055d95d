import { useState } from 'preact/hooks';
import { get, post, type ApiError } from '../api';
import type { components } from '../schema';
import { asApiError, can, ErrorNote, isMe, Section, timeUntil, useLoad, when, Who, type Me } from '../ui';

type Replay = components['schemas']['Replay'];
type Policy = components['schemas']['Policy'];

/** Until the gate the workflow opened closes (its decision_deadline), as a person reads it. */
const timeLeft = (replay: Replay) => timeUntil(replay.decision_deadline, 'not set yet', 'expiring');

/** The policies that asked for approval, by name where this key can read them. */
function askingPolicies(replay: Replay, policies: Policy[]): string {
  if (replay.approval_policies.length === 0) return 'unknown';
  return replay.approval_policies.map((id) => {
    const p = policies.find((q) => q.policy_id === id);
    return p ? `${p.name} (${id})` : id;
  }).join(', ');
}

export function ApprovalsView({ me }: { me: Me }) {
  const waiting = useLoad(() => get('/v1/approvals', { query: { limit: 100 } }), [], 3000);
  const policies = useLoad(() => get('/v1/policies', { query: { limit: 100 } }), []);
  // A replay this approver acted on stays on screen with its outcome, though the list refreshes without it.
  const [acted, setActed] = useState<Record<string, Replay>>({});
  const known = policies.data?.data ?? [];
  const listed = waiting.data?.data ?? [];
  const rows = [...listed, ...Object.values(acted).filter((a) => !listed.some((r) => r.replay_id === a.replay_id))];
  return (
    <Section title="Approvals">
      {waiting.error ? <ErrorNote error={waiting.error} retry={waiting.reload} /> : null}
      {waiting.data && rows.length === 0 ? <p>No replay is waiting for a decision.</p> : null}
      {rows.map((r) => (
        <WaitingReplay key={r.replay_id} me={me} replay={r} policies={known} onDeciding={() => setActed((a) => ({ ...a, [r.replay_id]: r }))} onDecided={waiting.reload} />
      ))}
    </Section>
  );
}

function WaitingReplay({ me, replay, policies, onDeciding, onDecided }: { me: Me; replay: Replay; policies: Policy[]; onDeciding: () => void; onDecided: () => void }) {
  const incident = useLoad(() => get('/v1/incidents/{id}', { params: { id: replay.incident_id } }), [replay.incident_id]);
  const [comment, setComment] = useState('');
  const [error, setError] = useState<ApiError>();
  const [sent, setSent] = useState<string>();
  const own = isMe(me, replay.requested_by_person, replay.requested_by);
  const decide = (decision: 'approve' | 'deny') => () => {
    const path = decision === 'approve' ? '/v1/replays/{id}/approve' : '/v1/replays/{id}/deny';
    onDeciding();
    post(path, { params: { id: replay.replay_id }, body: comment ? { comment } : {} }).then(
      () => { setSent(decision); onDecided(); },
      (err: unknown) => setError(asApiError(err)),
    );
  };
  const i = incident.data;
  const commentId = `comment-${replay.replay_id}`;
  return (
    <article class="card" aria-label={`Replay ${replay.replay_id}`}>
      <h3><a href={`#/replays/${replay.replay_id}`}>{replay.replay_id}</a></h3>
      <dl class="facts">
        <dt>Incident</dt>
        <dd><a href={`#/incidents/${replay.incident_id}`}>{replay.incident_id}</a>{i ? ` — ${i.severity}, ${i.service} / ${i.environment} / ${i.region}` : ''}</dd>
        <dt>Policy asking for approval</dt><dd>{askingPolicies(replay, policies)}</dd>
        <dt>Time left</dt><dd>{replay.decision_deadline ? <time dateTime={replay.decision_deadline} title={when(replay.decision_deadline)}>{timeLeft(replay)}</time> : timeLeft(replay)}</dd>
        <dt>Requested by</dt><dd><Who person={replay.requested_by_person} credential={replay.requested_by} /> at {when(replay.requested_at)}</dd>
      </dl>
      {can(me, 'approve') ? (
        <div class="decision">
          <label for={commentId}>Comment</label>
          <textarea id={commentId} value={comment} onInput={(e) => setComment(e.currentTarget.value)} disabled={own || !!sent} rows={2} />
          <div class="actions">
            <button type="button" onClick={decide('approve')} disabled={own || !!sent} aria-describedby={own ? `own-${replay.replay_id}` : undefined}>Approve</button>
            <button type="button" class="secondary" onClick={decide('deny')} disabled={own || !!sent}>Deny</button>
          </div>
          {own ? <p class="note" id={`own-${replay.replay_id}`}>You requested this replay: another approver must decide it (four eyes).</p> : null}
          {sent ? <p class="note" role="status">Decision sent: {sent}.</p> : null}
          {error ? <ErrorNote error={error} /> : null}
        </div>
      ) : null}
    </article>
  );
}
