// autocannon ships no types; only what the bench calls and reads is described.
declare module 'autocannon' {
  interface Result {
    requests: { total: number; average: number };
    latency: { p50: number; p99: number };
    non2xx: number;
    errors: number;
    duration: number;
  }
  function autocannon(opts: object): Promise<Result>;
  export = autocannon;
}
