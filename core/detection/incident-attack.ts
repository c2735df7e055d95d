import type { AttackDetails } from './attack-details';
import type { ClassRates, Rates } from './traffic-class';

/** One judged window of an attack, as stored with its decision (storage/attack-windows-repo.ts). */
export interface JudgedWindow {
  window_end: number;
  type: string;
  vector: string;
  scope: 'host' | 'prefix';
  rates: Rates;
  details: AttackDetails;
}

/**
 * What an incident shows of the attack that opened it, from the windows its
 * target crossed over the incident's span: the type and details of the peak
 * window (the highest total packets a second; ties: the earliest), the peak
 * of each total rate over every window, and the latest window's rates as the
 * current ones. Undefined when no window was judged (an incident of another
 * detector).
 */
export interface IncidentAttack {
  type: string;
  vector: string;
  scope: 'host' | 'prefix';
  windows: number;
  peak: ClassRates;
  current: ClassRates;
  peak_window_end: number;
  details: Omit<AttackDetails, 'peak' | 'current'>;
}

export function incidentAttack(windows: readonly JudgedWindow[]): IncidentAttack | undefined {
  if (windows.length === 0) return undefined;
  let peakWindow = windows[0]!;
  let latest = windows[0]!;
  const peak: ClassRates = { pps: 0, bps: 0, fps: 0 };
  for (const w of windows) {
    const total = w.rates.total;
    if (total.pps > peakWindow.rates.total.pps || (total.pps === peakWindow.rates.total.pps && w.window_end < peakWindow.window_end)) peakWindow = w;
    if (w.window_end > latest.window_end) latest = w;
    peak.pps = Math.max(peak.pps, total.pps);
    peak.bps = Math.max(peak.bps, total.bps);
    peak.fps = Math.max(peak.fps, total.fps);
  }
  const d = peakWindow.details;
  const details = {
    total: d.total,
    protocols: d.protocols,
    top_sources: d.top_sources,
    top_source_ports: d.top_source_ports,
    top_destination_ports: d.top_destination_ports,
    packet_sizes: d.packet_sizes,
    exporters: d.exporters,
  };
  return {
    type: peakWindow.type,
    vector: peakWindow.vector,
    scope: peakWindow.scope,
    windows: windows.length,
    peak,
    current: { ...latest.rates.total },
    peak_window_end: peakWindow.window_end,
    details,
  };
}
