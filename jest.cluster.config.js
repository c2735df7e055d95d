/**
 * The cluster tests (test/cluster/): the service's roles as processes on a 3-node JetStream
 * cluster, and two ClickHouse replicas under ZooKeeper, each engine killed in turn. About seven
 * minutes on 2 cores, so they run as CI's second command (`npm run test:cluster`, which
 * .ci/run calls after `npm test`), one file at a time: each starts a whole cluster.
 * @type {import('jest').Config}
 */
const base = require('./jest.config');
module.exports = { ...base, roots: ['<rootDir>/test/cluster'], testPathIgnorePatterns: ['/node_modules/'], maxWorkers: 1 };
