import http from 'node:http';

/**
 * A client as a collector would write one: it posts 500-flow NDJSON batches
 * with an Idempotency-Key and retries each, with the same key and body,
 * until it is acknowledged: on 503 and 429 (after Retry-After), on a dropped
 * or refused connection, and on a timeout. Each flow is marked by its batch
 * (the source address) and its place in it (the destination port), so what
 * is stored can be matched with what was acknowledged.
 */
export const flowsPerBatch = 500;
export const bytesPerFlow = 1000;

export interface LoadReport {
  acknowledgedBatches: number;
  acknowledgedFlows: number;
  /** Attempts that were not acknowledged, by answer (a status, or the network error). */
  retries: Record<string, number>;
  /** Answers no retry can fix (a 4xx other than 429, a 5xx other than 503): each is a defect. */
  unexpected: string[];
  /** Acknowledged batches by the address that acknowledged them (the client may spread its posts over several). */
  acknowledgedBy: Record<string, number>;
}

/** The source address that marks batch `n` (n < 65,536). */
export const batchSource = (n: number) => `10.${200 + (n >> 16)}.${(n >> 8) & 255}.${n & 255}`;

export class LoadClient {
  private next = 0;
  private stopping = false;
  private aborted = false;
  private running: Promise<void>[] = [];
  private readonly report: LoadReport = { acknowledgedBatches: 0, acknowledgedFlows: 0, retries: {}, unexpected: [], acknowledgedBy: {} };
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

  constructor(private readonly opts: { url: () => string; key: string; scenario: string; senders: number; timestamp: number }) {}

  start(): void {
    for (let i = 0; i < this.opts.senders; i += 1) this.running.push(this.sender());
  }

  /** Lets every sender finish the batch it holds (acknowledged, however long that takes), then reports. */
  async stop(): Promise<LoadReport> {
    this.stopping = true;
    await Promise.all(this.running);
    this.agent.destroy();
    return this.report;
  }

  /** Gives up at once, acknowledged or not (a scenario that failed): no sender is left retrying. */
  abort(): void {
    this.stopping = true;
    this.aborted = true;
    this.agent.destroy();
  }

  retriesOf(reason: string): number {
    return this.report.retries[reason] ?? 0;
  }

  get acknowledged(): number {
    return this.report.acknowledgedBatches;
  }

  acknowledgedBy(url: string): number {
    return this.report.acknowledgedBy[url] ?? 0;
  }

  private async sender(): Promise<void> {
    while (!this.stopping) {
      const n = this.next++;
      if (!(await this.deliver(n, this.batch(n)))) return;
      this.report.acknowledgedBatches += 1;
      this.report.acknowledgedFlows += flowsPerBatch;
    }
  }

  private batch(n: number): string {
    const src = batchSource(n);
    const lines: string[] = [];
    for (let i = 0; i < flowsPerBatch; i += 1) {
      lines.push(JSON.stringify({ src_ip: src, dst_ip: '192.0.2.1', src_port: 40000, dst_port: 1000 + i, protocol: 'tcp', bytes: bytesPerFlow, packets: 1, timestamp: this.opts.timestamp }));
    }
    return lines.join('\n') + '\n';
  }

  private async deliver(n: number, body: string): Promise<boolean> {
    for (let attempt = 0; !this.aborted; attempt += 1) {
      // Asked on every attempt: a client spreading its posts retries on the next address.
      const url = this.opts.url();
      const answer = await this.post(url, body, `${this.opts.scenario}-${n}`);
      if (answer.status === 201) {
        this.report.acknowledgedBy[url] = (this.report.acknowledgedBy[url] ?? 0) + 1;
        return true;
      }
      const reason = answer.status ? String(answer.status) : answer.error!;
      this.report.retries[reason] = (this.report.retries[reason] ?? 0) + 1;
      if (answer.status && answer.status !== 503 && answer.status !== 429) this.report.unexpected.push(`${answer.status} ${answer.text.slice(0, 200)}`);
      const waitMs = answer.retryAfterSeconds ? answer.retryAfterSeconds * 1000 : Math.min(2000, 100 * 2 ** Math.min(attempt, 5));
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
    return false;
  }

  private post(base: string, body: string, idempotencyKey: string): Promise<{ status?: number; text: string; error?: string; retryAfterSeconds?: number }> {
    return new Promise((resolve) => {
      const url = new URL('/flow', base);
      const req = http.request(
        url,
        {
          method: 'POST',
          agent: this.agent,
          timeout: 15_000,
          headers: { authorization: `Bearer ${this.opts.key}`, 'content-type': 'application/x-ndjson', 'idempotency-key': idempotencyKey },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode, text, retryAfterSeconds: Number(res.headers['retry-after']) || undefined }));
          res.on('error', (err) => resolve({ text: '', error: errorName(err) }));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (err) => resolve({ text: '', error: errorName(err) }));
      req.end(body);
    });
  }
}

const errorName = (err: Error & { code?: string }) => err.code ?? err.message;
