import { workspaceOrgIdSchema } from '../../core/ids';
import { readTelemetryHeaders, telemetryHeaderNames } from '../../core/telemetry-headers';
import { readFlowDigest } from '../../core/detection/flow-digest-reader';
import { earliestTimestamp } from '../../core/telemetry';
import type { RateFlow } from '../../core/detection/traffic-class';
import { readFlowRows } from './flow-lines';

/** Why a message of the detection feed was refused (the label of `nettel_detection_messages_refused_total`). */
export type FeedRefusal = 'oversize' | 'bad_subject' | 'bad_headers' | 'not_rows' | 'org_mismatch' | 'bad_row' | 'unknown_workspace';

export type FeedVerdict = { ok: true; org: string; flows: RateFlow[] } | { ok: false; reason: FeedRefusal };

export interface FeedScreenConfig {
  /** `<prefix>.detect.flow.`: the feed's subjects (streams/names.ts detectionSubject) less the workspace. */
  subjectPrefix: string;
  /** The largest message the writers copy: the telemetry publisher's bound (the server's max payload less 4 KiB). */
  maxBytes: number;
}

/** Event times run up to a day ahead of this clock (core/telemetry.ts latestTimestamp), given the clock. */
const dayMs = 86_400_000;

/**
 * Whether a message of the detection feed is a copy as the stream workers
 * publish it (streams/detection-feed.ts), before anything of it is counted.
 * Whoever can publish on the feed's subjects is not trusted: the workspace is
 * the subject's (never a header's or a row's alone), the kind and workspace
 * headers must agree with it, the message may be no larger than a copy can
 * be, and every flow must be in range: a digest's lines
 * (core/detection/flow-digest-reader.ts) or, from a release before the
 * digest, rows of that workspace (flow-lines.ts). Whether the workspace exists is the sink's question (it
 * needs I/O).
 */
export function screenFeedMessage(
  message: { subject: string; data: Uint8Array; headers?: { get(key: string): string } },
  config: FeedScreenConfig,
  now: number,
): FeedVerdict {
  if (message.data.byteLength > config.maxBytes) return { ok: false, reason: 'oversize' };
  const org = message.subject.startsWith(config.subjectPrefix) ? message.subject.slice(config.subjectPrefix.length) : '';
  if (!workspaceOrgIdSchema.safeParse(org).success) return { ok: false, reason: 'bad_subject' };
  const headers = readTelemetryHeaders(message.headers);
  if (headers.kind !== 'flow' || headers.org !== org) return { ok: false, reason: 'bad_headers' };
  const times = { earliest: earliestTimestamp, latest: now + dayMs };
  // A digest carries no workspace of its own: the subject's, checked above against the headers, is its workspace.
  const read = message.headers?.get(telemetryHeaderNames.digest) === '1' ? readFlowDigest(message.data, times) : readFlowRows(message.data, org, times);
  return read.ok ? { ok: true, org, flows: read.flows } : read;
}
