import { Reader, type Long } from 'protobufjs/minimal';
import { flowMessageFields as f, type CollectedFlow } from '../../core/flow-message';

/**
 * protobufjs answers 64-bit varints as numbers, or as a Long (low and high
 * 32 bits) when the `long` package is around. Nanosecond times pass 2^53:
 * as doubles they lose under a microsecond, and the service keeps milliseconds.
 */
const toNumber = (v: number | Long): number => (typeof v === 'number' ? v : (v.high >>> 0) * 4_294_967_296 + (v.low >>> 0));

const emptyFlow = (): CollectedFlow => ({
  type: 0,
  timeReceivedNs: 0,
  samplingRate: 0,
  timeFlowStartNs: 0,
  timeFlowEndNs: 0,
  bytes: 0,
  packets: 0,
  proto: 0,
  srcPort: 0,
  dstPort: 0,
  inIf: 0,
  outIf: 0,
  ipTos: 0,
  tcpFlags: 0,
  srcAs: 0,
  dstAs: 0,
});

/**
 * One GoFlow2 FlowMessage (protobuf) into the fields the service stores;
 * every other field is skipped by its wire type. Throws on a malformed
 * message (protobufjs's RangeError): the caller counts and drops it.
 */
export function decodeFlowMessage(message: Uint8Array): CollectedFlow {
  const r = Reader.create(message);
  const m = emptyFlow();
  while (r.pos < r.len) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      case f.type: m.type = r.uint32(); break;
      case f.samplingRate: m.samplingRate = toNumber(r.uint64()); break;
      case f.srcAddr: m.srcAddr = r.bytes(); break;
      case f.dstAddr: m.dstAddr = r.bytes(); break;
      case f.bytes: m.bytes = toNumber(r.uint64()); break;
      case f.packets: m.packets = toNumber(r.uint64()); break;
      case f.samplerAddress: m.samplerAddress = r.bytes(); break;
      case f.srcAs: m.srcAs = r.uint32(); break;
      case f.dstAs: m.dstAs = r.uint32(); break;
      case f.inIf: m.inIf = r.uint32(); break;
      case f.outIf: m.outIf = r.uint32(); break;
      case f.proto: m.proto = r.uint32(); break;
      case f.srcPort: m.srcPort = r.uint32(); break;
      case f.dstPort: m.dstPort = r.uint32(); break;
      case f.ipTos: m.ipTos = r.uint32(); break;
      case f.tcpFlags: m.tcpFlags = r.uint32(); break;
      case f.timeReceivedNs: m.timeReceivedNs = toNumber(r.uint64()); break;
      case f.timeFlowStartNs: m.timeFlowStartNs = toNumber(r.uint64()); break;
      case f.timeFlowEndNs: m.timeFlowEndNs = toNumber(r.uint64()); break;
      default: r.skipType(tag & 7);
    }
  }
  return m;
}

/** GoFlow2 frames its binary output as varint length + message (protodelim); larger frames are not flows. */
const maxFrameBytes = 64 * 1024;

/**
 * Cuts GoFlow2's stdout into messages. Chunks split frames anywhere, so the
 * tail of a chunk waits for the next one. A length past maxFrameBytes means
 * the stream lost its framing: it throws, and the supervisor restarts GoFlow2.
 */
export class FlowMessageFramer {
  private rest: Buffer = Buffer.alloc(0);

  push(chunk: Buffer, onMessage: (message: Buffer) => void): void {
    const buf = this.rest.length ? Buffer.concat([this.rest, chunk]) : chunk;
    let pos = 0;
    for (;;) {
      const frame = readLength(buf, pos);
      if (!frame) break;
      if (frame.length > maxFrameBytes) throw new Error(`GoFlow2 output lost its framing (a ${frame.length}-byte frame)`);
      const end = frame.start + frame.length;
      if (end > buf.length) break;
      onMessage(buf.subarray(frame.start, end));
      pos = end;
    }
    this.rest = pos < buf.length ? Buffer.from(buf.subarray(pos)) : Buffer.alloc(0);
  }
}

/** The varint length at `pos`, or undefined when the buffer ends inside it. */
function readLength(buf: Buffer, pos: number): { length: number; start: number } | undefined {
  let length = 0;
  for (let shift = 0, i = pos; i < buf.length && shift < 35; shift += 7, i += 1) {
    const byte = buf[i]!;
    length += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return { length, start: i + 1 };
  }
  if (buf.length - pos >= 5) throw new Error('GoFlow2 output lost its framing (an overlong length)');
  return undefined;
}
