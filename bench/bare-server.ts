import http from 'node:http';

/**
 * The baseline for one flow per request: a bare Node http server that reads
 * the body, parses it and answers 201 "Flow saved", as the service does
 * without auth, validation and JetStream.
 */
const server = http.createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    JSON.parse(Buffer.concat(chunks).toString('utf8'));
    res.writeHead(201, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('Flow saved');
  });
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.send!({ port: typeof address === 'object' && address ? address.port : 0 });
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
