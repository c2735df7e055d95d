/** The part of npm net-snmp (3.29, no types of its own) the SNMP client uses. */
declare module 'net-snmp' {
  import type { EventEmitter } from 'node:events';

  export interface Varbind {
    oid: string;
    type: number;
    value: unknown;
  }

  export interface SessionOptions {
    port?: number;
    retries?: number;
    timeout?: number;
    transport?: string;
    version?: number;
  }

  export interface User {
    name: string;
    level: number;
    authProtocol?: number;
    authKey?: string;
    privProtocol?: number;
    privKey?: string;
  }

  export interface Session extends EventEmitter {
    subtree(oid: string, maxRepetitions: number, feed: (varbinds: Varbind[]) => boolean | void, done: (error?: Error) => void): void;
    close(): void;
  }

  export const Version2c: number;
  export const SecurityLevel: { noAuthNoPriv: number; authNoPriv: number; authPriv: number };
  export const AuthProtocols: { none: number; md5: number; sha: number; sha224: number; sha256: number; sha384: number; sha512: number };
  export const PrivProtocols: { none: number; des: number; aes: number; aes256b: number; aes256r: number };
  export function createSession(target: string, community: string, options?: SessionOptions): Session;
  export function createV3Session(target: string, user: User, options?: SessionOptions): Session;
  export function isVarbindError(varbind: Varbind): boolean;
}
