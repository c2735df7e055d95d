import { flowRowFields, flowRowJson, type FlowInput } from '../core/flow';
import { hasJsonLinesShape, rowPrefixOf } from '../core/json-lines';
import { hasRowsOf, rowShapeOf } from '../core/row-shape';

/**
 * `node dist/bench/row-screen.js`: the stream workers' screen of one message's
 * rows on a realistic 5,000-row message of collected flows (every exporter
 * field present), the shape check before issue 32 against the parse after it.
 * Prints the CPU time per message and the lines per second of each.
 */
const org = 'org_3kq9v2m8x1';
const rows = 5_000;
const lines: string[] = [];
for (let i = 0; i < rows; i += 1) {
  const input: FlowInput = {
    src_ip: `10.${i % 256}.${(i >> 8) % 256}.7`,
    dst_ip: `2001:db8::${(i % 65535).toString(16)}`,
    src_port: 1024 + (i % 50_000),
    dst_port: 443,
    protocol: i % 3 ? 'tcp' : 'udp',
    bytes: 1_500 * (1 + (i % 90)),
    packets: 1 + (i % 90),
    timestamp: 1_796_000_000_000 + i,
    exporter: '192.0.2.17',
    in_if: 3,
    out_if: 7,
    src_as: 64_500 + (i % 20),
    dst_as: 15_169,
    tcp_flags: 24,
    tos: 0,
    flow_start: 1_796_000_000_000 + i - 900,
    flow_end: 1_796_000_000_000 + i,
    sampling_rate: 100,
  };
  lines.push(flowRowJson(input, { org_id: org, event_id: `evt_${i.toString(36).padStart(12, '0')}`, ts: 0, received_at: 1_796_000_000_500 }).json);
}
const data = Buffer.from(lines.join('\n') + '\n');
const shape = rowShapeOf(flowRowFields);
const prefix = rowPrefixOf(org);

/**
 * CPU time, not wall time: the machine is shared, and another process's burst
 * stretches a wall-clock sample without costing this one anything.
 */
function time(name: string, check: () => boolean): void {
  const rounds = 300;
  // The first rounds warm the JIT.
  for (let round = 0; round < 50; round += 1) if (!check()) throw new Error(`${name} refused the message`);
  const before = process.cpuUsage();
  for (let round = 0; round < rounds; round += 1) check();
  const used = process.cpuUsage(before);
  const ms = (used.user + used.system) / 1000 / rounds;
  process.stdout.write(`${name}: ${ms.toFixed(3)} ms of CPU a message, ${Math.round(rows / (ms / 1000)).toLocaleString('en')} lines/s\n`);
}

process.stdout.write(`one message: ${rows} rows, ${data.length.toLocaleString('en')} bytes\n`);
time('before: shape check (hasJsonLinesShape)', () => hasJsonLinesShape(data, prefix));
time('after: row parse (hasRowsOf)', () => hasRowsOf(data, org, shape));
time('JSON.parse of every line, for scale', () => data.toString('utf8').split('\n').every((l) => l === '' || (JSON.parse(l) as { org_id: string }).org_id === org));
