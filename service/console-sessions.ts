import type { SessionLimits } from '../core/session';
import type { NatsClient } from '../streams/nats-client';
import { SessionBucket } from '../streams/session-bucket';
import type { Config } from './config';

/** The sessions' time-outs in milliseconds, from SESSION_IDLE_MINUTES and SESSION_MAX_HOURS. */
export const sessionLimitsOf = (config: Config): SessionLimits => ({ idleMs: config.sessions.idleMinutes * 60_000, maxMs: config.sessions.maxHours * 3_600_000 });

/** The bucket the console's sessions live in, as the api role and the topology job open it. */
export const sessionBucketOf = (config: Config, nats: NatsClient) =>
  new SessionBucket({ nats, prefix: config.nats.prefix, replicas: config.nats.replicas, ttlMs: sessionLimitsOf(config).maxMs });
