import { useEffect, useRef, useState } from 'preact/hooks';
import { get } from '../api';
import type { components } from '../schema';
import { asApiError, ErrorNote, number, when } from '../ui';

type Incident = components['schemas']['Incident'];
type Signal = components['schemas']['IncidentSignal'];
type ApiErrorOf = ReturnType<typeof asApiError>;

const pageSize = 100;

interface Loaded {
  signals: Signal[];
  next: string | null;
  error?: ApiErrorOf;
}

/**
 * Each signal of the incident on its time span, then as a table. The first
 * page reloads when the incident takes a new signal (its count or last_seen
 * moves); further pages load on demand.
 */
export function SignalTimeline({ incident: i }: { incident: Incident }) {
  const [loaded, setLoaded] = useState<Loaded>({ signals: [], next: null });
  // Each first page starts a new generation: a late answer of an older one (another incident, or a page
  // before the reload) is dropped, so pages never mix.
  const generation = useRef(0);
  const load = (cursor?: string) => {
    const asked = cursor ? generation.current : ++generation.current;
    return get('/v1/incidents/{id}/signals', { params: { id: i.id }, query: { limit: pageSize, ...(cursor ? { cursor } : {}) } }).then(
      (page) => asked === generation.current && setLoaded((l) => ({ signals: cursor ? [...l.signals, ...page.data] : page.data, next: page.next_cursor })),
      (err: unknown) => asked === generation.current && setLoaded((l) => ({ ...l, error: asApiError(err) })),
    );
  };
  useEffect(() => void load(), [i.id, i.signal_count, i.last_seen]);
  const { signals, next, error } = loaded;
  return (
    <>
      <h3>Signals' timeline</h3>
      {error ? <ErrorNote error={error} retry={() => void load()} /> : null}
      <SignalStrip incident={i} signals={signals} />
      <table aria-label="Signals of this incident">
        <thead>
          <tr><th scope="col">Event time</th><th scope="col">Kind</th><th scope="col">Latency</th><th scope="col">Bytes</th><th scope="col">Flow</th><th scope="col">ASN</th><th scope="col">Rule</th></tr>
        </thead>
        <tbody>
          {signals.map((s) => (
            <tr key={s.event_id}>
              <td><time dateTime={s.timestamp}>{when(s.timestamp)}</time></td>
              <td><span class={`badge kind-${s.telemetry}`}>{s.telemetry}</span></td>
              <td>{number(s.latency_ms)} ms</td>
              <td>{number(s.bytes)}</td>
              <td>{flowOf(s)}</td>
              <td>{s.asn ?? '—'}</td>
              <td>{s.rule ?? 'posted'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p class="muted">
        {number(signals.length)} of {number(i.signal_count)} signals shown.{' '}
        {next ? <button type="button" class="secondary" onClick={() => void load(next)}>Load more signals</button> : null}
      </p>
    </>
  );
}

const flowOf = (s: Signal) =>
  s.src_ip || s.dst_ip ? `${s.src_ip ?? '?'} → ${s.dst_ip ?? '?'}${s.dst_port ? `:${s.dst_port}` : ''}` : '—';

/** Where each loaded signal falls between the incident's first and last signal, one mark per signal, coloured by kind. */
function SignalStrip({ incident: i, signals }: { incident: Incident; signals: Signal[] }) {
  const first = Date.parse(i.first_seen);
  const span = Math.max(1, Date.parse(i.last_seen) - first);
  const kinds = [...new Set(signals.map((s) => s.telemetry))];
  const label = `${signals.length} signals from ${when(i.first_seen)} to ${when(i.last_seen)}, kinds: ${kinds.join(', ') || 'none loaded'}`;
  return (
    <figure class="signal-strip">
      <div class="strip-track" role="img" aria-label={label}>
        {signals.map((s) => (
          <span key={s.event_id} class={`strip-mark kind-${s.telemetry}`} style={{ left: `${((Date.parse(s.timestamp) - first) / span) * 100}%` }} />
        ))}
      </div>
      <figcaption>
        <time dateTime={i.first_seen}>{when(i.first_seen)}</time>
        <span>{kinds.map((k) => <span key={k} class={`badge kind-${k}`}>{k}</span>)}</span>
        <time dateTime={i.last_seen}>{when(i.last_seen)}</time>
      </figcaption>
    </figure>
  );
}
