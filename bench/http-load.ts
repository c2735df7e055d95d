/**
 * A load generator in its own process (forked by the bench), so that its
 * event loop never shares time with the server it measures. It receives the
 * run's options over IPC and answers with autocannon's result.
 */
import autocannon from 'autocannon';
interface LoadRequest {
  url: string;
  connections: number;
  durationSeconds: number;
  body: string;
  headers: Record<string, string>;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50_ms: number;
  p99_ms: number;
  non2xx: number;
  errors: number;
}



process.once('message', (msg: LoadRequest) => {
  autocannon({
    url: msg.url,
    method: 'POST',
    connections: msg.connections,
    duration: msg.durationSeconds,
    pipelining: 1,
    body: msg.body,
    headers: msg.headers,
  })
    .then((r) => {
      const result: LoadResult = {
        requests: r.requests.total,
        rps: r.requests.total / r.duration,
        p50_ms: r.latency.p50,
        p99_ms: r.latency.p99,
        non2xx: r.non2xx,
        errors: r.errors,
      };
      process.send!(result, () => process.exit(0));
    })
    .catch((err: Error) => {
      process.stderr.write(`load failed: ${err.stack}\n`);
      process.exit(1);
    });
});
