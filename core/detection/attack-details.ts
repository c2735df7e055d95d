import type { RateDecision } from './detect';
import { classBits, trafficClasses, type ClassRates, type RateFlow, type TrafficClass } from './traffic-class';

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

function addTo<K>(tallied: Map<K, Volume>, key: K, f: RateFlow): void {
  let v = tallied.get(key);
  if (!v) tallied.set(key, (v = zero()));
  add(v, f);
}

const compareKeys = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);
const ranksBefore = <K extends string | number>([ka, a]: [K, Volume], [kb, b]: [K, Volume]) => b.packets - a.packets || b.bytes - a.bytes || compareKeys(ka, kb);

/**
 * The `limit` largest entries by packets, then bytes, then key: one pass that
 * keeps the best `limit` in order, rather than a sort of every entry (a flood
 * from spoofed sources has as many as flows, and every crossing window of
 * every attacked destination ranks its own).
 */
function top<K extends string | number>(tallied: Map<K, Volume>, limit: number): Array<[K, Volume]> {
  const best: Array<[K, Volume]> = [];
  if (limit <= 0) return best;
  for (const entry of tallied) {
    if (best.length === limit && ranksBefore(entry, best[limit - 1]!) >= 0) continue;
    let at = best.length === limit ? limit - 1 : best.length;
    while (at > 0 && ranksBefore(entry, best[at - 1]!) < 0) {
      best[at] = best[at - 1]!;
      at -= 1;
    }
    best[at] = entry;
  }
  return best;
}

const binOf = (f: RateFlow): number | undefined => {
  if (f.packets <= 0) return undefined;
  const size = f.bytes / f.packets;
  let bin = 0;
  for (let i = 0; i < packetSizeBins.length; i++) if (size >= packetSizeBins[i]!) bin = i;
  return bin;
};

/** Every list's tallies over the flows, in one pass. */
function tallies(flows: readonly RateFlow[]) {
  const t = {
    total: zero(),
    byClass: trafficClasses.map(zero),
    sources: new Map<string, Volume>(),
    sourcePorts: new Map<number, Volume>(),
    destinationPorts: new Map<number, Volume>(),
    bins: new Map<number, Volume>(),
    exporters: new Map<string, Volume>(),
  };
  for (const f of flows) {
    add(t.total, f);
    for (let bits = classBits(f), i = 0; bits !== 0; bits >>>= 1, i += 1) if ((bits & 1) !== 0) add(t.byClass[i]!, f);
    addTo(t.sources, f.src_ip, f);
    addTo(t.sourcePorts, f.src_port, f);
    addTo(t.destinationPorts, f.dst_port, f);
    const bin = binOf(f);
    if (bin !== undefined) addTo(t.bins, bin, f);
    if (f.exporter) addTo(t.exporters, `${f.exporter}\u0000${f.in_if ?? ''}`, f);
  }
  return t;
}

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
  const t = tallies(flows);
  const total = t.total;
  const protocols = trafficClasses
    .map((c, i) => ({ class: c, ...t.byClass[i]!, share: total.packets > 0 ? t.byClass[i]!.packets / total.packets : 0 }))
    .filter((p) => p.class !== 'total' && p.flows > 0);
  return {
    ...rateExtremes(decisions),
    total,
    protocols,
    top_sources: top(t.sources, limit).map(([address, v]) => ({ address, ...v })),
    top_source_ports: top(t.sourcePorts, limit).map(([port, v]) => ({ port, ...v })),
    top_destination_ports: top(t.destinationPorts, limit).map(([port, v]) => ({ port, ...v })),
    packet_sizes: packetSizeBins
      .map((min, i) => ({ min, max: (packetSizeBins[i + 1] ?? 65536) - 1, ...(t.bins.get(i) ?? zero()) }))
      .filter((b) => b.flows > 0),
    exporters: top(t.exporters, limit).map(([key, v]) => {
      const [exporter = '', inIf = ''] = key.split('\u0000');
      return { exporter, in_if: inIf === '' ? null : Number(inIf), ...v };
    }),
  };
}
