import { useState } from 'preact/hooks';
import { get, post } from '../api';
import { Bars } from '../chart';
import type { components, paths } from '../schema';
import { asApiError, can, ErrorNote, number, Section, Status, useLoad, when, type Me } from '../ui';
import { AttackPanel } from './incident-attack';
import { SignalTimeline } from './incident-timeline';
import { ReplayList } from './replays';

type Incident = components['schemas']['Incident'];
/** Empty filters are dropped from the URL by the fetch wrapper. */
type IncidentQuery = NonNullable<paths['/v1/incidents']['get']['parameters']['query']>;
const sinceChoices: [string, number | null][] = [['any time', null], ['last hour', 3600_000], ['last 24 hours', 86_400_000], ['last 7 days', 7 * 86_400_000]];

export function IncidentsView({ me, id }: { me: Me; id?: string }) {
  return id ? <IncidentDetail me={me} id={id} /> : <IncidentList />;
}

function IncidentList() {
  const [filters, setFilters] = useState({ state: '', severity: '', service: '', environment: '', since: '' });
  const set = (name: keyof typeof filters) => (e: Event) => setFilters({ ...filters, [name]: (e.currentTarget as HTMLInputElement).value });
  const sinceMs = sinceChoices.find(([label]) => label === filters.since)?.[1];
  const query = { ...filters, since: sinceMs ? new Date(Date.now() - sinceMs).toISOString() : undefined, limit: 100 } as IncidentQuery;
  const list = useLoad(() => get('/v1/incidents', { query }), [JSON.stringify(filters)], 5000);
  return (
    <Section title="Incidents" actions={<span class="muted">{list.loading ? 'refreshing…' : 'live, every 5 s'}</span>}>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          State
          <select value={filters.state} onChange={set('state')}>
            {['', 'open', 'acknowledged', 'resolved'].map((v) => <option value={v}>{v || 'any'}</option>)}
          </select>
        </label>
        <label>
          Severity
          <select value={filters.severity} onChange={set('severity')}>
            {['', 'high', 'critical'].map((v) => <option value={v}>{v || 'any'}</option>)}
          </select>
        </label>
        <label>
          Service
          <input value={filters.service} onInput={set('service')} placeholder="exact name" />
        </label>
        <label>
          Environment
          <input value={filters.environment} onInput={set('environment')} placeholder="exact name" />
        </label>
        <label>
          Last seen
          <select value={filters.since} onChange={set('since')}>
            {sinceChoices.map(([label]) => <option value={label === 'any time' ? '' : label}>{label}</option>)}
          </select>
        </label>
      </form>
      {list.error ? <ErrorNote error={list.error} retry={list.reload} /> : null}
      <table>
        <thead>
          <tr><th scope="col">Incident</th><th scope="col">Severity</th><th scope="col">State</th><th scope="col">Service</th><th scope="col">Environment</th><th scope="col">Signals</th><th scope="col">Last seen</th></tr>
        </thead>
        <tbody>
          {(list.data?.data ?? []).map((i) => (
            <tr key={i.id}>
              <td><a href={`#/incidents/${i.id}`}>{i.id}</a></td>
              <td><Status value={i.severity} /></td>
              <td><Status value={i.state} /></td>
              <td>{i.service}</td>
              <td>{i.environment}</td>
              <td>{i.signal_count}</td>
              <td>{when(i.last_seen)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.data && list.data.data.length === 0 ? <p>No incident matches these filters.</p> : null}
    </Section>
  );
}

function IncidentDetail({ me, id }: { me: Me; id: string }) {
  const incident = useLoad(() => get('/v1/incidents/{id}', { params: { id } }), [id], 5000);
  const [actionError, setActionError] = useState<ReturnType<typeof asApiError>>();
  const act = (action: 'acknowledge' | 'resolve') => () => {
    const path = action === 'acknowledge' ? '/v1/incidents/{id}/acknowledge' : '/v1/incidents/{id}/resolve';
    post(path, { params: { id } }).then(() => { setActionError(undefined); incident.reload(); }, (err: unknown) => setActionError(asApiError(err)));
  };
  const i = incident.data;
  return (
    <Section title={`Incident ${id}`} actions={<a href="#/incidents">All incidents</a>}>
      {incident.error ? <ErrorNote error={incident.error} retry={incident.reload} /> : null}
      {actionError ? <ErrorNote error={actionError} /> : null}
      {i ? (
        <>
          <dl class="facts">
            <dt>Severity</dt><dd><Status value={i.severity} /></dd>
            <dt>State</dt><dd><Status value={i.state} /></dd>
            <dt>Service</dt><dd>{i.service}</dd>
            <dt>Environment</dt><dd>{i.environment}</dd>
            <dt>Region</dt><dd>{i.region}</dd>
            <dt>Opened by</dt><dd>{i.rule}</dd>
            <dt>Escalations</dt><dd>{i.escalations.join(', ') || 'none'}</dd>
            <dt>Kinds</dt><dd>{i.kinds.map((k) => <span class="badge" key={k}>{k}</span>)}</dd>
            <dt>Max latency</dt><dd>{number(i.max_latency_ms)} ms</dd>
          </dl>
          {can(me, 'incidents:manage') && i.state !== 'resolved' ? (
            <div class="actions">
              {i.state === 'open' ? <button type="button" onClick={act('acknowledge')}>Acknowledge</button> : null}
              <button type="button" onClick={act('resolve')}>Resolve</button>
            </div>
          ) : null}
          {i.attack ? <AttackPanel attack={i.attack} /> : null}
          <SignalTimeline incident={i} />
          {i.state !== 'open' ? <p>{i.state[0]!.toUpperCase() + i.state.slice(1)} at <time dateTime={i.updated_at}>{when(i.updated_at)}</time>.</p> : null}
          <IncidentTraffic incident={i} />
          <h3>Replays of this incident</h3>
          <ReplayList incidentId={id} />
        </>
      ) : null}
    </Section>
  );
}

/** Top talkers around the incident: its span, one correlation window (5 min) on each side. */
function IncidentTraffic({ incident: i }: { incident: Incident }) {
  const from = new Date(Date.parse(i.first_seen) - 300_000).toISOString();
  const to = new Date(Math.max(Date.parse(i.last_seen) + 300_000, Date.parse(i.first_seen) + 600_000)).toISOString();
  const top = useLoad(() => get('/v1/telemetry/flows/top', { query: { by: 'src_ip', metric: 'bytes', limit: 10, from, to } }), [from, to]);
  const rows = (top.data?.data ?? []).map((r) => ({ label: String(r.src_ip), value: Number(r.bytes), text: `${number(Number(r.bytes))} B` }));
  return (
    <>
      <h3>Top talkers around this incident</h3>
      {top.error ? <ErrorNote error={top.error} retry={top.reload} /> : <Bars title="Top sources by bytes" rows={rows} />}
    </>
  );
}
