import { defineSettings, integer, setting } from '../../core/settings';
import { defaultSnmpPollerConfig as byDefault } from './snmp-poller';

/** Interface names by SNMP: how often each exporter's agent is asked, and how long it may take to answer. */
export const snmpPollerSettings = defineSettings(
  'Interface enrichment (SNMP)',
  {
    SNMP_REFRESH_SECONDS: setting(integer(5, 86_400).default(byDefault.refreshMs / 1000), "how often each exporter's SNMP agent is asked for its interfaces (names kept between rounds, and when an agent stops answering)"),
    SNMP_TIMEOUT_MS: setting(integer(100, 60_000).default(byDefault.timeoutMs), 'how long one SNMP request waits for an answer'),
    SNMP_RETRIES: setting(integer(0, 10).default(byDefault.retries), 'how often an unanswered SNMP request is sent again before the agent counts as not answering'),
    SNMP_CONCURRENCY: setting(integer(1, 256).default(byDefault.concurrency), 'agents asked at once'),
  },
  (e) => ({
    snmpPoller: { refreshMs: e.SNMP_REFRESH_SECONDS * 1000, timeoutMs: e.SNMP_TIMEOUT_MS, retries: e.SNMP_RETRIES, concurrency: e.SNMP_CONCURRENCY },
  }),
);
