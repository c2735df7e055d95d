import { z } from 'zod';
import { tcpFlagNames } from './mitigation';
import { isAddressText } from './telemetry';

/**
 * The schema of a playbook's actions (core/playbooks.ts holds the document
 * and its bounds table): a blackhole, a Flowspec discard or rate limit with
 * its filter, a Flowspec rule from the attack's fingerprint, or a webhook call.
 */
const protocolNumbers = { icmp: 1, tcp: 6, udp: 17 } as const;
const protocolNumber = z.number().int().min(0).max(255);
const protocolName = z.codec(z.enum(['tcp', 'udp', 'icmp']), protocolNumber, {
  decode: (name) => protocolNumbers[name],
  encode: (n) => (Object.entries(protocolNumbers).find(([, v]) => v === n)?.[0] ?? 'tcp') as keyof typeof protocolNumbers,
});
const port = z.number().int().min(0).max(65_535);
const ports = z.array(port).max(16).default([]);
const packetLength = z
  .object({ min: port, max: port })
  .strict()
  .refine((l) => l.min <= l.max, { message: 'min must not exceed max', path: ['min'] });

const tcpFlags = z
  .array(z.enum(tcpFlagNames))
  .max(tcpFlagNames.length)
  .default([])
  .superRefine((flags, ctx) => {
    flags.forEach((flag, i) => {
      if (flags.indexOf(flag) !== i) ctx.addIssue({ code: 'custom', path: [i], message: `the flag ${flag} is given twice` });
    });
  });

const flowspecFilter = {
  protocols: z.array(z.union([protocolNumber, protocolName])).max(8).default([]),
  source_ports: ports,
  destination_ports: ports,
  tcp_flags: tcpFlags,
  packet_length: packetLength.nullable().default(null),
};

/** TCP flags only match TCP: a rule that names them names no other protocol alone. */
function tcpFlagsNeedTcp(action: { protocols: number[]; tcp_flags: string[] }, ctx: z.RefinementCtx): void {
  if (action.tcp_flags.length > 0 && action.protocols.length > 0 && !action.protocols.includes(protocolNumbers.tcp)) {
    ctx.addIssue({ code: 'custom', path: ['tcp_flags'], message: 'tcp flags need protocols empty or holding tcp (6)' });
  }
}

const durationMinutes = z.number().int().min(1).max(10_080);
/** Withdrawn as soon as the incident it answers resolves (its attack ended), `duration_minutes` being the longest it is held. */
const untilAttackEnds = z.boolean().optional();

/** A standard community (RFC 1997): `asn:value`, each a 16-bit number. */
const community = z
  .string()
  .refine((c) => /^\d{1,5}:\d{1,5}$/.test(c) && c.split(':').every((part) => Number(part) <= 65_535), 'must be asn:value, each 0-65535');

export const actionSchema = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('blackhole'),
      duration_minutes: durationMinutes,
      until_attack_ends: untilAttackEnds,
      communities: z.array(community).max(8).default([]),
      next_hop: z.string().refine(isAddressText, 'must be an IPv4 or IPv6 address').nullable().default(null),
    })
    .strict(),
  z.object({ type: z.literal('flowspec_discard'), duration_minutes: durationMinutes, until_attack_ends: untilAttackEnds, ...flowspecFilter }).strict().superRefine(tcpFlagsNeedTcp),
  z
    .object({
      type: z.literal('flowspec_rate_limit'),
      duration_minutes: durationMinutes,
      until_attack_ends: untilAttackEnds,
      rate_bytes_per_second: z.number().min(1).max(1e12),
      ...flowspecFilter,
    })
    .strict()
    .superRefine(tcpFlagsNeedTcp),
  z
    .object({
      type: z.literal('flowspec_fingerprint'),
      duration_minutes: durationMinutes,
      until_attack_ends: untilAttackEnds,
      attack_share: z.number().min(0.5).max(1).default(0.9),
      baseline_share: z.number().min(0).max(0.5).default(0.1),
    })
    .strict(),
  z.object({ type: z.literal('webhook') }).strict(),
]);

