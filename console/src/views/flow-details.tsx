import { get } from '../api';
import { ErrorNote, number, useLoad, when } from '../ui';

/**
 * The telemetry page's enriched flows (issue 33): the latest flows with
 * their AS numbers and names, countries and TCP flags, and the traffic by
 * input interface with its name and classification (connectivity, provider),
 * as the analyst API answers them.
 */
type Window = { from: string; to: string };

const flagNames: [number, string][] = [[1, 'FIN'], [2, 'SYN'], [4, 'RST'], [8, 'PSH'], [16, 'ACK'], [32, 'URG'], [64, 'ECE'], [128, 'CWR']];

/** TCP flags as their names (SYN ACK), or — for none. */
export const tcpFlags = (flags: number) => flagNames.filter(([bit]) => (flags & bit) !== 0).map(([, name]) => name).join(' ') || '—';

const asText = (as: number, name: string | null) => (as ? `AS${as}${name ? ` ${name}` : ''}` : '—');

export function RecentFlows({ window }: { window: Window }) {
  const flows = useLoad(() => get('/v1/telemetry/flows', { query: { limit: 15, ...window } }), [window]);
  if (flows.error) return <ErrorNote error={flows.error} retry={flows.reload} />;
  const rows = flows.data?.data ?? [];
  return (
    <>
      <h3>Latest flows</h3>
      <table aria-label="Latest flows">
        <thead>
          <tr>
            <th scope="col">Time</th><th scope="col">Source</th><th scope="col">Source AS</th><th scope="col">Source country</th>
            <th scope="col">Destination</th><th scope="col">Destination AS</th><th scope="col">Destination country</th>
            <th scope="col">Protocol</th><th scope="col">TCP flags</th><th scope="col">Bytes</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((f) => (
            <tr key={f.event_id}>
              <td>{when(f.ts)}</td><td>{f.src_ip}</td><td>{asText(f.src_as, f.src_as_name)}</td><td>{f.src_country ?? '—'}</td>
              <td>{f.dst_ip}{f.dst_port ? `:${f.dst_port}` : ''}</td><td>{asText(f.dst_as, f.dst_as_name)}</td><td>{f.dst_country ?? '—'}</td>
              <td>{f.protocol}</td><td>{f.protocol === 'tcp' ? tcpFlags(f.tcp_flags) : '—'}</td><td>{number(f.bytes)}</td>
            </tr>
          ))}
          {flows.data && rows.length === 0 ? <tr><td colSpan={10}>No flows in this range.</td></tr> : null}
        </tbody>
      </table>
    </>
  );
}

export function InterfaceTraffic({ window }: { window: Window }) {
  const top = useLoad(() => get('/v1/telemetry/flows/top', { query: { by: 'in_if_name,in_if_connectivity,in_if_provider', metric: 'bytes', limit: 10, totals: 'all', ...window } }), [window]);
  if (top.error) return <ErrorNote error={top.error} retry={top.reload} />;
  const text = (v: string | number | null | undefined) => (v === null || v === undefined || v === '' ? '—' : String(v));
  return (
    <>
      <h3>Traffic by input interface</h3>
      <table aria-label="Traffic by input interface">
        <thead>
          <tr><th scope="col">Interface</th><th scope="col">Connectivity</th><th scope="col">Provider</th><th scope="col">Bytes</th><th scope="col">Packets</th><th scope="col">Flows</th></tr>
        </thead>
        <tbody>
          {(top.data?.data ?? []).map((r) => (
            <tr key={`${text(r.in_if_name)} ${text(r.in_if_connectivity)} ${text(r.in_if_provider)}`}>
              <td>{text(r.in_if_name)}</td><td>{text(r.in_if_connectivity)}</td><td>{text(r.in_if_provider)}</td>
              <td>{number(Number(r.bytes ?? 0))}</td><td>{number(Number(r.packets ?? 0))}</td><td>{number(Number(r.flows ?? 0))}</td>
            </tr>
          ))}
          {top.data && top.data.data.length === 0 ? <tr><td colSpan={6}>No flows in this range.</td></tr> : null}
        </tbody>
      </table>
    </>
  );
}
