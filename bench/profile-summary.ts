import fs from 'node:fs';
import path from 'node:path';

/**
 * Reads the .cpuprofile files `node --cpu-prof` wrote and lists the
 * functions with the most self time: the evidence BENCHMARKS.md cites.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

export function summarizeProfiles(dir: string, top: number) {
  const out: Record<string, Array<{ fn: string; self_pct: number }>> = {};
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as { nodes: ProfileNode[] };
    const self = new Map<string, number>();
    let total = 0;
    for (const n of profile.nodes) {
      const hits = n.hitCount ?? 0;
      total += hits;
      const where = n.callFrame.url ? `${path.basename(n.callFrame.url)}:${n.callFrame.lineNumber + 1}` : 'native';
      const name = `${n.callFrame.functionName || '(anonymous)'} ${where}`;
      self.set(name, (self.get(name) ?? 0) + hits);
    }
    out[file] = [...self.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([fn, hits]) => ({ fn, self_pct: Math.round((hits / total) * 1000) / 10 }));
  }
  return out;
}
