import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { CheckedTarget } from '../../application/outbound-guard';

export interface PostLimits {
  /** From the start of the connection to the end of the answer. */
  timeoutMs: number;
  /** Bytes of the answer read at most; the rest is not read. */
  maxResponseBytes: number;
}

export interface PostResult {
  /** The answer's HTTP status; 0 when there was none. */
  status: number;
  latencyMs: number;
  /** Why the attempt failed, when it did: not 2xx, a redirect, a time-out, a refused connection. */
  error?: string;
}

/** A lookup that answers the address already checked, whatever the caller asks: no second resolution. */
function pinnedLookup(target: CheckedTarget): LookupFunction {
  return (_hostname, options, callback) => {
    const family = target.family === 6 ? 6 : 4;
    if ((options as { all?: boolean }).all) (callback as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: target.address, family }]);
    else callback(null, target.address, family);
  };
}

/**
 * POSTs one body to a checked target: connects only to the checked address,
 * follows no redirect (a 3xx is a failed attempt), gives up after the
 * time-out, and reads at most `maxResponseBytes` of the answer.
 */
export function postOnce(target: CheckedTarget, body: string, headers: Record<string, string>, limits: PostLimits): Promise<PostResult> {
  const started = performance.now();
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (status: number, error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ status, latencyMs: Math.round(performance.now() - started), ...(error ? { error } : {}) });
    };
    const req = client.request(target.url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'nettel-webhooks/1' },
      lookup: pinnedLookup(target),
      agent: false,
    });
    const timer = setTimeout(() => {
      finish(0, `no answer within ${limits.timeoutMs} ms`);
      req.destroy();
    }, limits.timeoutMs);
    req.on('error', (err) => finish(0, `request failed: ${err.message}`));
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > limits.maxResponseBytes) res.destroy();
      });
      const done = () => finish(status, outcomeError(status));
      res.on('end', done);
      res.on('close', done);
      res.on('error', done);
    });
    req.end(body);
  });
}

function outcomeError(status: number): string | undefined {
  if (status >= 200 && status < 300) return undefined;
  if (status >= 300 && status < 400) return `redirect ${status} not followed`;
  return `answered ${status}`;
}
