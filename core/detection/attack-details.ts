import type { RateDecision } from './detect';
import { classesOf, trafficClasses, type ClassRates, type RateFlow, type TrafficClass } from './traffic-class';

/**
 * What an incident shows of the attack: its peak and current rates (from the
 * decisions of its windows), and from its flows the protocol breakdown, top
 * sources and ports, packet sizes and the exporters and interfaces that saw
 * it. Every list holds at most `limit` (10) entries, ranked by packets, then
 * bytes, then the key, so the same flows give the same lists in any order.
 */
export interface Volume {
  packets: number;
  bytes: number;
  flows: number;
}

export interface AttackDetails {
  /** The highest of each total rate over the attack's windows. */
  peak: ClassRates;
  /** The total rates of its latest window. */
  current: ClassRates;
  total: Volume;
  protocols: Array<Volume & { class: TrafficClass; share: number }>;
  top_sources: Array<Volume & { address: string }>;
  top_source_ports: Array<Volume & { port: number }>;
  top_destination_ports: Array<Volume & { port: number }>;
  /** Flows by their mean packet size (bytes / packets), in fixed bins. */
  packet_sizes: Array<Volume & { min: number; max: number }>;
  exporters: Array<Volume & { exporter: string; in_if: number | null }>;
}

export const detailsLimit = 10;

/** The packet-size bins' lower bounds (bytes); each bin ends below the next one's, the last at 65535. */
export const packetSizeBins = [0, 64, 128, 256, 512, 1024, 1500] as const;

const zero = (): Volume => ({ packets: 0, bytes: 0, flows: 0 });
const add = (v: Volume, f: RateFlow) => {
  v.packets += f.packets;
  v.bytes += f.bytes;
  v.flows += 1;
};

function tally<K>(flows: readonly RateFlow[], keyOf: (f: RateFlow) => K | undefined): Map<K, Volume> {
  const out = new Map<K, Volume>();
  for (const f of flows) {
    const key = keyOf(f);
    if (key === undefined) continue;
    let v = out.get(key);
    if (!v) out.set(key, (v = zero()));
    add(v, f);
  }
  return out;
}

const compareKeys = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);

/** The `limit` largest entries by packets, then bytes, then key. */
function top<K extends string | number>(tallied: Map<K, Volume>, limit: number): Array<[K, Volume]> {
  return [...tallied].sort(([ka, a], [kb, b]) => b.packets - a.packets || b.bytes - a.bytes || compareKeys(ka, kb)).slice(0, limit);
}

const binOf = (f: RateFlow): number | undefined => {
  if (f.packets <= 0) return undefined;
  const size = f.bytes / f.packets;
  let bin = 0;
  for (let i = 0; i < packetSizeBins.length; i++) if (size >= packetSizeBins[i]!) bin = i;
  return bin;
};

function rateExtremes(decisions: readonly RateDecision[]): { peak: ClassRates; current: ClassRates } {
  const peak: ClassRates = { pps: 0, bps: 0, fps: 0 };
  let latest: RateDecision | undefined;
  for (const d of decisions) {
    peak.pps = Math.max(peak.pps, d.rates.total.pps);
    peak.bps = Math.max(peak.bps, d.rates.total.bps);
    peak.fps = Math.max(peak.fps, d.rates.total.fps);
    if (!latest || d.window_end > latest.window_end) latest = d;
  }
  return { peak, current: latest ? { ...latest.rates.total } : { pps: 0, bps: 0, fps: 0 } };
}

export function attackDetails(flows: readonly RateFlow[], decisions: readonly RateDecision[], limit = detailsLimit): AttackDetails {
  const total = zero();
  for (const f of flows) add(total, f);
  const byClass = new Map<TrafficClass, Volume>();
  for (const f of flows) for (const c of classesOf(f)) if (c !== 'total') add(byClass.get(c) ?? byClass.set(c, zero()).get(c)!, f);
  const protocols = trafficClasses
    .filter((c) => byClass.has(c))
    .map((c) => ({ class: c, ...byClass.get(c)!, share: total.packets > 0 ? byClass.get(c)!.packets / total.packets : 0 }));
  const bins = tally(flows, binOf);
  return {
    ...rateExtremes(decisions),
    total,
    protocols,
    top_sources: top(tally(flows, (f) => f.src_ip), limit).map(([address, v]) => ({ address, ...v })),
    top_source_ports: top(tally(flows, (f) => f.src_port), limit).map(([port, v]) => ({ port, ...v })),
    top_destination_ports: top(tally(flows, (f) => f.dst_port), limit).map(([port, v]) => ({ port, ...v })),
    packet_sizes: packetSizeBins
      .map((min, i) => ({ min, max: (packetSizeBins[i + 1] ?? 65536) - 1, ...(bins.get(i) ?? zero()) }))
      .filter((b) => b.flows > 0),
    exporters: top(tally(flows, (f) => (f.exporter ? `${f.exporter}\u0000${f.in_if ?? ''}` : undefined)), limit).map(([key, v]) => {
      const [exporter = '', inIf = ''] = key.split('\u0000');
      return { exporter, in_if: inIf === '' ? null : Number(inIf), ...v };
    }),
  };
}
