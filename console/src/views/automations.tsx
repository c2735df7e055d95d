import { useState } from 'preact/hooks';
import { get, post, type ApiError } from '../api';
import type { components } from '../schema';
import { asApiError, can, ErrorNote, isMe, Section, timeUntil, useLoad, when, Who, type Me } from '../ui';

type Automation = components['schemas']['Automation'];
type Mitigation = components['schemas']['Mitigation'];
type Preview = NonNullable<Automation['actions'][number]['preview']>;

const bps = (value: number) => (value >= 1e9 ? `${(value / 1e9).toFixed(2)} Gbit/s` : value >= 1e6 ? `${(value / 1e6).toFixed(2)} Mbit/s` : `${Math.round(value / 1e3)} kbit/s`);
const percent = (share: number) => `${(share * 100).toFixed(1)} %`;

/** Automation runs waiting for a decision, with what each action would cut, and the mitigations announced now. */
export function AutomationsView({ me }: { me: Me }) {
  const waiting = useLoad(() => get('/v1/automations', { query: { status: 'awaiting_approval', limit: 100 } }), [], 3000);
  const active = useLoad(() => get('/v1/mitigations'), [], 3000);
  const guardrails = useLoad(() => get('/v1/guardrails'), [], 30_000);
  // A run this approver acted on stays on screen with its outcome, though the list refreshes without it.
  const [acted, setActed] = useState<Record<string, Automation>>({});
  const listed = waiting.data?.data ?? [];
  const runs = [...listed, ...Object.values(acted).filter((a) => !listed.some((r) => r.automation_id === a.automation_id))];
  return (
    <>
      {guardrails.data?.ungated ? (
        <div class="error" role="alert">
          <strong>Nobody decides this workspace's automations.</strong>{' '}
          <span>Enabled playbooks act with no active policy requiring an approver: their mitigations are announced at once.</span>
        </div>
      ) : null}
      <Section title="Automations waiting for a decision">
        {waiting.error ? <ErrorNote error={waiting.error} retry={waiting.reload} /> : null}
        {waiting.data && runs.length === 0 ? <p>No automation is waiting for a decision.</p> : null}
        {runs.map((a) => (
          <WaitingAutomation key={a.automation_id} me={me} run={a} onDeciding={() => setActed((x) => ({ ...x, [a.automation_id]: a }))} onDecided={() => { waiting.reload(); active.reload(); }} />
        ))}
      </Section>
      <Section title="Mitigations announced now">
        {active.error ? <ErrorNote error={active.error} retry={active.reload} /> : null}
        {active.data && active.data.data.length === 0 ? <p>Nothing is announced.</p> : null}
        {active.data && active.data.data.length > 0 ? (
          <table>
            <thead><tr><th>Action</th><th>Destination</th><th>Incident</th><th>Time left</th><th /></tr></thead>
            <tbody>{active.data.data.map((m) => <ActiveMitigation key={m.id} me={me} mitigation={m} onWithdrawn={active.reload} />)}</tbody>
          </table>
        ) : null}
      </Section>
    </>
  );
}

function PreviewFacts({ preview }: { preview: Preview }) {
  return (
    <dl class="facts">
      <dt>Matched (last {preview.window_minutes} min)</dt>
      <dd>{bps(preview.matched_bits_per_second)}, {Math.round(preview.matched_packets_per_second)} packets/s, {percent(preview.share)} of the destination's {bps(preview.destination_bits_per_second)}</dd>
      <dt>Heaviest sources it would drop</dt>
      <dd>{preview.top_sources.length ? preview.top_sources.map((s) => `${s.src_ip} (${percent(s.share)})`).join(', ') : 'none in the stored flows'}</dd>
    </dl>
  );
}

function WaitingAutomation({ me, run, onDeciding, onDecided }: { me: Me; run: Automation; onDeciding: () => void; onDecided: () => void }) {
  const [comment, setComment] = useState('');
  const [error, setError] = useState<ApiError>();
  const [sent, setSent] = useState<string>();
  const own = isMe(me, run.requested_by_person, run.requested_by);
  const decide = (decision: 'approve' | 'deny') => () => {
    const path = decision === 'approve' ? '/v1/automations/{id}/approve' : '/v1/automations/{id}/deny';
    onDeciding();
    post(path, { params: { id: run.automation_id }, body: comment ? { comment } : {} }).then(
      () => { setSent(decision); onDecided(); },
      (err: unknown) => setError(asApiError(err)),
    );
  };
  const commentId = `comment-${run.automation_id}`;
  return (
    <article class="card" aria-label={`Automation ${run.automation_id}`}>
      <h3>{run.playbook_id} (version {run.playbook_version})</h3>
      <dl class="facts">
        <dt>Incident</dt><dd><a href={`#/incidents/${run.incident_id}`}>{run.incident_id}</a></dd>
        <dt>Time left to decide</dt><dd>{timeUntil(run.decision_deadline, 'not set', 'expiring')}</dd>
        <dt>Playbook written by</dt><dd><Who person={run.requested_by_person} credential={run.requested_by} /> at {when(run.requested_at)}</dd>
      </dl>
      {run.actions.map((a) => (
        <section key={a.id} aria-label={`Action ${a.type}`}>
          <h4>{a.type}{a.destination ? ` on ${a.destination}` : ''}{a.duration_minutes ? ` for ${a.duration_minutes} min` : ''}</h4>
          {a.preview ? <PreviewFacts preview={a.preview} /> : null}
        </section>
      ))}
      {can(me, 'approve') ? (
        <div class="decision">
          <label for={commentId}>Comment</label>
          <textarea id={commentId} value={comment} onInput={(e) => setComment(e.currentTarget.value)} disabled={own || !!sent} rows={2} />
          <div class="actions">
            <button type="button" onClick={decide('approve')} disabled={own || !!sent}>Approve</button>
            <button type="button" class="secondary" onClick={decide('deny')} disabled={own || !!sent}>Deny</button>
          </div>
          {own ? <p class="note">You wrote the playbook version this run follows: another approver must decide it (four eyes).</p> : null}
          {sent ? <p class="note" role="status">Decision sent: {sent}.</p> : null}
          {error ? <ErrorNote error={error} /> : null}
        </div>
      ) : null}
    </article>
  );
}

function ActiveMitigation({ me, mitigation, onWithdrawn }: { me: Me; mitigation: Mitigation; onWithdrawn: () => void }) {
  const [error, setError] = useState<ApiError>();
  const withdraw = () =>
    post('/v1/automations/{id}/withdraw', { params: { id: mitigation.automation_id }, body: {} }).then(onWithdrawn, (err: unknown) => setError(asApiError(err)));
  return (
    <tr>
      <td>{mitigation.type}</td>
      <td><code>{mitigation.destination}</code></td>
      <td><a href={`#/incidents/${mitigation.incident_id}`}>{mitigation.incident_id}</a></td>
      <td><time dateTime={mitigation.ends_at} title={when(mitigation.ends_at)}>{timeUntil(mitigation.ends_at, 'not set', 'ending')}</time></td>
      <td>
        {can(me, 'approve') ? <button type="button" class="secondary" onClick={withdraw}>Withdraw</button> : null}
        {error ? <ErrorNote error={error} /> : null}
      </td>
    </tr>
  );
}
