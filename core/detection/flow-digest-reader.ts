import type { RateFlow } from './traffic-class';
import { flowDigestColumns } from '../flow';
import { rateFlowOf, type TimeBounds } from './untrusted-flow';

export type FlowDigestVerdict = { ok: true; flows: RateFlow[] } | { ok: false; reason: 'not_rows' | 'bad_row' };

/** The digits from `from` to `to` as their number; anything but 1 to 16 ASCII digits (an empty field included) is NaN, which the range check refuses. */
function numberIn(text: string, from: number, to: number): number {
  if (to <= from || to - from > 16) return Number.NaN;
  let n = 0;
  for (let i = from; i < to; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return Number.NaN;
    n = n * 10 + digit;
  }
  // Past 2^53 the sum is no longer exact, but it stays past it: the range check refuses it.
  return n;
}

function protocolOf(s: string): unknown {
  if (!s.startsWith('"')) return s;
  try {
    return JSON.parse(s) as unknown;
  } catch {
    return undefined;
  }
}

const fieldCount = flowDigestColumns.length;

/**
 * One line's fields, read in place: the text is cut only for the fields kept
 * as text (addresses, the protocol), numbers are read from their digits.
 */
class DigestLine {
  /** Where each field starts (its index) and, one on, where it ends plus one. */
  private readonly bounds = new Int32Array(fieldCount + 1);

  constructor(private readonly text: string) {}

  /** Finds the line's fields between `start` and `end` (its newline): false unless there are exactly twelve. */
  split(start: number, end: number): boolean {
    const { text, bounds } = this;
    bounds[0] = start;
    for (let i = 1; i < fieldCount; i++) {
      const tab = text.indexOf('\t', bounds[i - 1]);
      if (tab === -1 || tab >= end) return false;
      bounds[i] = tab + 1;
    }
    const extra = text.indexOf('\t', bounds[fieldCount - 1]);
    if (extra !== -1 && extra < end) return false;
    bounds[fieldCount] = end + 1;
    return true;
  }

  private from = (i: number) => this.bounds[i]!;
  private to = (i: number) => this.bounds[i + 1]! - 1;
  number = (i: number) => numberIn(this.text, this.from(i), this.to(i));
  optionalNumber = (i: number) => (this.to(i) === this.from(i) ? undefined : this.number(i));
  string = (i: number) => this.text.slice(this.from(i), this.to(i));
  optionalString = (i: number) => (this.to(i) === this.from(i) ? undefined : this.string(i));
}

/** One digest line as a RateFlow, or undefined when it is not twelve fields each in its range. */
function digestFlowOf(line: DigestLine, times: TimeBounds): RateFlow | undefined {
  return rateFlowOf(
    {
      ts: line.number(0),
      src_ip: line.string(1),
      dst_ip: line.string(2),
      src_port: line.number(3),
      dst_port: line.number(4),
      protocol: protocolOf(line.string(5)),
      bytes: line.number(6),
      packets: line.number(7),
      tcp_flags: line.optionalNumber(8),
      exporter: line.optionalString(9),
      in_if: line.optionalNumber(10),
      out_if: line.optionalNumber(11),
    },
    times,
  );
}

/**
 * A digest's flows, every line in range, or why it is refused: whoever can
 * publish on the feed is not trusted, so one bad line refuses the whole
 * message, never partly counted.
 */
export function readFlowDigest(data: Uint8Array, times: TimeBounds): FlowDigestVerdict {
  const text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8');
  if (!text.endsWith('\n')) return { ok: false, reason: 'not_rows' };
  const line = new DigestLine(text);
  const flows: RateFlow[] = [];
  for (let start = 0; start < text.length; ) {
    const end = text.indexOf('\n', start);
    const flow = line.split(start, end) ? digestFlowOf(line, times) : undefined;
    if (!flow) return { ok: false, reason: 'bad_row' };
    flows.push(flow);
    start = end + 1;
  }
  return { ok: true, flows };
}
