import * as snmp from 'net-snmp';
import type { InterfaceAttributes } from '../../core/enrichment/classifier';
import { interfaceOids, interfacesOfWalk, type SnmpSettings } from '../../core/enrichment/interfaces';

/** How long one request waits and how often it is sent again before the agent is taken as not answering. */
export interface SnmpTiming {
  timeoutMs: number;
  retries: number;
}

/** An agent that did not answer, or answered with an error: what the poller reports. */
export class SnmpAgentError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SnmpAgentError';
  }
}

const authProtocols = { sha: snmp.AuthProtocols.sha, sha256: snmp.AuthProtocols.sha256, sha512: snmp.AuthProtocols.sha512 } as const;
const privProtocols = { aes: snmp.PrivProtocols.aes, aes256b: snmp.PrivProtocols.aes256b, aes256r: snmp.PrivProtocols.aes256r } as const;

function sessionOf(address: string, s: SnmpSettings, timing: SnmpTiming): snmp.Session {
  const options = { port: s.port, retries: timing.retries, timeout: timing.timeoutMs, transport: address.includes(':') ? 'udp6' : 'udp4' };
  if (s.version === '2c') return snmp.createSession(address, s.community, { ...options, version: snmp.Version2c });
  const user = {
    name: s.user,
    level: snmp.SecurityLevel.authPriv,
    authProtocol: authProtocols[s.auth_protocol],
    authKey: s.auth_key,
    privProtocol: privProtocols[s.priv_protocol],
    privKey: s.priv_key,
  };
  return snmp.createV3Session(address, user, options);
}

/** Text of an OCTET STRING (a Buffer), trimmed of the NULs some agents pad with. */
const textOf = (value: unknown) => (Buffer.isBuffer(value) ? value.toString('utf8') : typeof value === 'string' ? value : '').replace(/\0+$/, '');

/** The varbinds under one table column, by the index that ends their OID. */
function walkColumn<T>(session: snmp.Session, column: string, convert: (value: unknown) => T): Promise<Map<number, T>> {
  const found = new Map<number, T>();
  return new Promise((resolve, reject) => {
    session.subtree(
      column,
      20,
      (varbinds: snmp.Varbind[]) => {
        for (const vb of varbinds) {
          if (snmp.isVarbindError(vb)) continue;
          const index = Number(vb.oid.slice(column.length + 1));
          if (Number.isSafeInteger(index) && vb.oid.startsWith(`${column}.`)) found.set(index, convert(vb.value));
        }
      },
      (err?: Error) => (err ? reject(new SnmpAgentError(`walk of ${column} failed: ${err.message}`, { cause: err })) : resolve(found)),
    );
  });
}

/**
 * Asks an agent for its interfaces: ifName, ifAlias, ifHighSpeed and ifDescr
 * walked by numeric OID (no MIB files), one session, closed at the end.
 */
export async function pollInterfaces(address: string, settings: SnmpSettings, timing: SnmpTiming): Promise<InterfaceAttributes[]> {
  const session = sessionOf(address, settings, timing);
  // net-snmp reports socket errors on the session; they also fail the walk in flight.
  session.on('error', () => undefined);
  try {
    const name = await walkColumn(session, interfaceOids.name, textOf);
    const alias = await walkColumn(session, interfaceOids.alias, textOf);
    const highSpeed = await walkColumn(session, interfaceOids.highSpeed, (v) => Number(v) || 0);
    const descr = await walkColumn(session, interfaceOids.descr, textOf);
    return interfacesOfWalk({ name, alias, highSpeed, descr });
  } finally {
    session.close();
  }
}
