import { get } from '../api';
import type { components } from '../schema';
import { ErrorNote, number, Section, Status, useLoad, when, Who } from '../ui';

type Replay = components['schemas']['Replay'];
const terminal = new Set(['completed', 'denied', 'expired', 'failed']);

interface Report {
  parity: boolean;
  differences: { field: string; recorded: unknown; replayed: unknown }[];
  recorded: Record<string, unknown> | null;
  replayed: Record<string, unknown> | null;
  automation?: {
    window: { from: string; to: string; minutes: number };
    flows_examined: number;
    bytes_examined: number;
    signals_examined: number;
    actions: { action: string; src_ip: string; dst_ip: string; bytes: number; flows: number }[];
  };
  duration_ms?: number;
}

export function ReplaysView({ id }: { id?: string }) {
  return id ? <ReplayDetail id={id} /> : (
    <Section title="Replays">
      <ReplayList />
    </Section>
  );
}

export function ReplayList({ incidentId }: { incidentId?: string }) {
  const list = useLoad(() => get('/v1/replays', { query: { incident_id: incidentId, limit: 50 } }), [incidentId], 3000);
  if (list.error) return <ErrorNote error={list.error} retry={list.reload} />;
  const rows = list.data?.data ?? [];
  if (list.data && rows.length === 0) return <p>No replay yet.</p>;
  return (
    <table>
      <thead>
        <tr><th scope="col">Replay</th><th scope="col">Incident</th><th scope="col">Status</th><th scope="col">Requested by</th><th scope="col">Requested</th></tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.replay_id}>
            <td><a href={`#/replays/${r.replay_id}`}>{r.replay_id}</a></td>
            <td><a href={`#/incidents/${r.incident_id}`}>{r.incident_id}</a></td>
            <td><Status value={r.status} /></td>
            <td><Who person={r.requested_by_person} credential={r.requested_by} /></td>
            <td>{when(r.requested_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ReplayDetail({ id }: { id: string }) {
  // Polls until the replay reaches a final state, so its status is seen as it moves.
  const replay = useLoad(() => get('/v1/replays/{id}', { params: { id } }), [id], 1000);
  const r = replay.data;
  return (
    <Section title={`Replay ${id}`} actions={<a href="#/replays">All replays</a>}>
      {replay.error ? <ErrorNote error={replay.error} retry={replay.reload} /> : null}
      {r ? <ReplayFacts replay={r} /> : null}
      {r?.report ? <ParityReport report={r.report} /> : null}
    </Section>
  );
}

function ReplayFacts({ replay: r }: { replay: Replay }) {
  return (
    <>
      <dl class="facts">
        <dt>Status</dt><dd><span data-testid="replay-status"><Status value={r.status} /></span>{terminal.has(r.status) ? '' : ' (updating)'}</dd>
        <dt>Incident</dt><dd><a href={`#/incidents/${r.incident_id}`}>{r.incident_id}</a></dd>
        <dt>Requested by</dt><dd><Who person={r.requested_by_person} credential={r.requested_by} /> at {when(r.requested_at)}</dd>
        <dt>Window</dt><dd>{r.window_minutes} minutes</dd>
        {r.error ? <><dt>Error</dt><dd><code>{r.error.code}</code> {r.error.message}</dd></> : null}
      </dl>
      {r.approvals.length > 0 ? (
        <>
          <h3>Decisions</h3>
          <ul>
            {r.approvals.map((a) => (
              <li key={a.at}>{a.decision} by <Who person={a.person} credential={a.approver_key_id} /> at {when(a.at)}{a.comment ? `: “${a.comment}”` : ''}</li>
            ))}
          </ul>
        </>
      ) : null}
    </>
  );
}

const show = (v: unknown): string =>
  v === null || v === undefined ? '—' : Array.isArray(v) ? v.map(show).join(', ') || '[]' : typeof v === 'string' ? v : JSON.stringify(v);

function ParityReport({ report }: { report: Report }) {
  const fields = Object.keys(report.recorded ?? report.replayed ?? {});
  const differs = new Set(report.differences.map((d) => d.field));
  const a = report.automation;
  return (
    <>
      <h3>Parity report: <span data-testid="parity">{report.parity ? 'parity' : 'differences found'}</span></h3>
      <table>
        <thead><tr><th scope="col">Field</th><th scope="col">Recorded</th><th scope="col">Replayed</th><th scope="col">Equal</th></tr></thead>
        <tbody>
          {fields.map((f) => (
            <tr key={f} class={differs.has(f) ? 'differs' : ''}>
              <th scope="row">{f}</th>
              <td>{show(report.recorded?.[f])}</td>
              <td>{show(report.replayed?.[f])}</td>
              <td>{differs.has(f) ? 'no' : 'yes'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {a ? (
        <>
          <h3>Automation</h3>
          <p>
            Window {when(a.window.from)} to {when(a.window.to)} ({a.window.minutes} min): {number(a.flows_examined)} flows,{' '}
            {number(a.bytes_examined)} bytes, {number(a.signals_examined)} signals examined{report.duration_ms !== undefined ? `, in ${report.duration_ms} ms` : ''}.
          </p>
          {a.actions.length === 0 ? <p>No mitigation proposed.</p> : (
            <table>
              <thead><tr><th scope="col">Action</th><th scope="col">Source</th><th scope="col">Destination</th><th scope="col">Bytes</th><th scope="col">Flows</th></tr></thead>
              <tbody>
                {a.actions.map((x) => (
                  <tr key={`${x.src_ip}-${x.dst_ip}`}><td>{x.action}</td><td>{x.src_ip}</td><td>{x.dst_ip}</td><td>{number(x.bytes)}</td><td>{number(x.flows)}</td></tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      ) : null}
    </>
  );
}
