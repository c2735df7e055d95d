import type { components } from '../schema';
import { number, when } from '../ui';

type Attack = components['schemas']['Attack'];
type Volume = { packets: number; bytes: number; flows: number };

const rate = (r: { pps: number; bps: number; fps: number }) => `${number(Math.round(r.pps))} packets/s · ${bits(r.bps)} · ${number(Math.round(r.fps))} flows/s`;
const bits = (bps: number) => {
  const units: Array<[number, string]> = [[1e9, 'Gbit/s'], [1e6, 'Mbit/s'], [1e3, 'kbit/s']];
  const [scale, unit] = units.find(([s]) => bps >= s) ?? [1, 'bit/s'];
  return `${(bps / scale).toLocaleString('en-US', { maximumFractionDigits: 1 })} ${unit}`;
};
const typeName = (type: string) => type.replace(/_/g, ' ');

/**
 * What the rate detectors saw of the attack on the incident's target: its
 * type, peak and current rates, then the peak window's breakdowns (the
 * attack's fingerprint as a person reads it).
 */
export function AttackPanel({ attack: a }: { attack: Attack }) {
  return (
    <section aria-label="Attack">
      <h3>Attack: <span class={`badge attack-${a.type}`}>{typeName(a.type)}</span></h3>
      <dl class="facts">
        <dt>Shape</dt><dd>{a.scope === 'prefix' ? `spread over the prefix (${typeName(a.vector)})` : typeName(a.vector)}</dd>
        <dt>Peak</dt><dd>{rate(a.peak)}</dd>
        <dt>Current</dt><dd>{rate(a.current)}</dd>
        <dt>Peak window</dt><dd>ends <time dateTime={a.peak_window_end}>{when(a.peak_window_end)}</time>, {number(a.windows)} windows over threshold</dd>
      </dl>
      <VolumeTable caption="Protocol breakdown" head="Class" rows={a.protocols.map((p) => ({ key: p.class, label: `${p.class} (${Math.round(p.share * 100)} %)`, ...p }))} />
      <VolumeTable caption="Top sources" head="Source" rows={a.top_sources.map((s) => ({ key: s.address, label: s.address, ...s }))} />
      <VolumeTable caption="Top source ports" head="Port" rows={a.top_source_ports.map((p) => ({ key: String(p.port), label: String(p.port), ...p }))} />
      <VolumeTable caption="Top destination ports" head="Port" rows={a.top_destination_ports.map((p) => ({ key: String(p.port), label: String(p.port), ...p }))} />
      <VolumeTable caption="Packet sizes" head="Bytes a packet" rows={a.packet_sizes.map((s) => ({ key: `${s.min}`, label: `${s.min}–${s.max}`, ...s }))} />
      <VolumeTable caption="Seen by" head="Exporter (input interface)" rows={a.exporters.map((e) => ({ key: `${e.exporter}/${e.in_if}`, label: e.in_if === null ? e.exporter : `${e.exporter} (${e.in_if})`, ...e }))} />
    </section>
  );
}

function VolumeTable({ caption, head, rows }: { caption: string; head: string; rows: Array<Volume & { key: string; label: string }> }) {
  if (rows.length === 0) return null;
  return (
    <table aria-label={caption}>
      <caption>{caption}</caption>
      <thead>
        <tr><th scope="col">{head}</th><th scope="col">Packets</th><th scope="col">Bytes</th><th scope="col">Flows</th></tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key}><td>{r.label}</td><td>{number(r.packets)}</td><td>{number(r.bytes)}</td><td>{number(r.flows)}</td></tr>
        ))}
      </tbody>
    </table>
  );
}
