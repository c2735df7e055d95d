import { lookup } from 'node:dns/promises';
import { hostOf, pickAddress, urlRefusal } from '../core/outbound';

/** A URL the service may call, and the address it was checked at: connect there and nowhere else. */
export interface CheckedTarget {
  url: URL;
  host: string;
  address: string;
  family: number;
}

/** A call refused by the outbound rules (scheme, credentials, internal address, no address). */
export class OutboundRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundRefused';
  }
}

export type LookupAll = (host: string) => Promise<Array<{ address: string; family: number }>>;

const systemLookup: LookupAll = async (host) => lookup(host, { all: true, verbatim: true });

/**
 * Checks a URL against the outbound rules and resolves its host, every
 * address it has; the caller connects to the address returned, so a second
 * resolution cannot swap in another (DNS rebinding). Used when a webhook is
 * subscribed and before every delivery attempt.
 */
export async function checkTarget(text: string, allowedHosts: ReadonlySet<string>, lookupAll: LookupAll = systemLookup): Promise<CheckedTarget> {
  const refusal = urlRefusal(text, allowedHosts);
  if (refusal) throw new OutboundRefused(refusal);
  const url = new URL(text);
  const host = hostOf(url);
  const addresses = await lookupAll(host).catch(() => []);
  const picked = pickAddress(host, addresses, allowedHosts);
  if (!picked.ok) throw new OutboundRefused(picked.refusal);
  return { url, host, address: picked.address.address, family: picked.address.family };
}
