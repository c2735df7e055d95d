/**
 * Why a write to ClickHouse failed, and whether trying again can help, as a
 * pure function over what the error says: ClickHouse's numeric code (both
 * transports: the HTTP server's answer, chDB's "Code: N." message), the
 * system error code of a connection that failed (ECONNREFUSED, …) and the
 * error's name.
 *
 * - transient: the engine cannot take the rows now (out of memory, too many
 *   parts, a timeout, read-only, a network failure, a missing table or user
 *   an operator will fix); nothing is wrong with the rows, so they are
 *   retried for as long as it lasts.
 * - permanent: the engine refused the rows themselves (a parse or type
 *   error, an unknown column); no retry can change that.
 * - unknown: ClickHouse answered with a code this list does not know. It is
 *   up and judged the request, and most of its codes are about the query or
 *   its data: retried a bounded number of times, then treated as permanent.
 *
 * An error with no ClickHouse code and no known system code (an exception of
 * our own, a NATS call during correlation) says nothing against the rows: it
 * is taken as transient.
 */
export type FailureClass = 'transient' | 'permanent' | 'unknown';

export interface FailureFacts {
  /** ClickHouse's error code, when the engine answered with one. */
  clickhouseCode?: number;
  /** A Node system error code of the failed connection (ECONNREFUSED, ETIMEDOUT, …). */
  systemCode?: string;
  /** The error's class name (UnreadableMessageError: the message body is not NDJSON; UnsafeInsertError: rows refused before the engine; DetectionFeedError: written, not copied to the rate detectors). */
  name?: string;
}

export interface FailureVerdict {
  class: FailureClass;
  /** A short, bounded label for metrics and logs. */
  reason: string;
}

/** ClickHouse codes of a condition that passes (src/Common/ErrorCodes.cpp), by metric label. */
const transientCodes: Readonly<Record<number, string>> = {
  32: 'network', // ATTEMPT_TO_READ_AFTER_EOF: an answer cut short
  60: 'missing_table', // UNKNOWN_TABLE: a schema not migrated yet or dropped; the operator's to fix
  74: 'disk', // CANNOT_READ_FROM_FILE_DESCRIPTOR
  75: 'disk', // CANNOT_WRITE_TO_FILE_DESCRIPTOR: a full or failing disk
  76: 'disk', // CANNOT_OPEN_FILE
  81: 'missing_table', // UNKNOWN_DATABASE
  159: 'timeout', // TIMEOUT_EXCEEDED
  160: 'timeout', // TOO_SLOW
  164: 'read_only', // READONLY
  173: 'memory_limit', // CANNOT_ALLOCATE_MEMORY
  192: 'access', // UNKNOWN_USER
  193: 'access', // WRONG_PASSWORD
  194: 'access', // REQUIRED_PASSWORD
  195: 'access', // IP_ADDRESS_NOT_ALLOWED
  198: 'network', // DNS_ERROR
  201: 'overload', // QUOTA_EXPIRED
  202: 'overload', // TOO_MANY_SIMULTANEOUS_QUERIES
  203: 'overload', // NO_FREE_CONNECTION
  204: 'disk', // CANNOT_FSYNC
  209: 'timeout', // SOCKET_TIMEOUT
  210: 'network', // NETWORK_ERROR
  225: 'replication', // NO_ZOOKEEPER
  236: 'aborted', // ABORTED
  241: 'memory_limit', // MEMORY_LIMIT_EXCEEDED
  242: 'read_only', // TABLE_IS_READ_ONLY
  243: 'disk', // NOT_ENOUGH_SPACE
  244: 'replication', // UNEXPECTED_ZOOKEEPER_ERROR
  218: 'missing_table', // TABLE_IS_DROPPED
  252: 'too_many_parts', // TOO_MANY_PARTS
  254: 'replication', // NO_ACTIVE_REPLICAS
  279: 'network', // ALL_CONNECTION_TRIES_FAILED
  285: 'replication', // TOO_FEW_LIVE_REPLICAS
  286: 'replication', // UNSATISFIED_QUORUM_FOR_PREVIOUS_WRITE
  289: 'replication', // REPLICA_IS_NOT_IN_QUORUM
  291: 'access', // DATABASE_ACCESS_DENIED
  319: 'replication', // UNKNOWN_STATUS_OF_INSERT
  364: 'overload', // RECEIVED_ERROR_TOO_MANY_REQUESTS
  369: 'replication', // ALL_REPLICAS_ARE_STALE
  373: 'overload', // SESSION_IS_LOCKED
  384: 'too_many_parts', // PART_IS_TEMPORARILY_LOCKED
  394: 'aborted', // QUERY_WAS_CANCELLED
  425: 'system', // SYSTEM_ERROR
  439: 'overload', // CANNOT_SCHEDULE_TASK
  473: 'overload', // DEADLOCK_AVOIDED
  497: 'access', // ACCESS_DENIED
  516: 'access', // AUTHENTICATION_FAILED
  999: 'replication', // KEEPER_EXCEPTION
  1000: 'system', // POCO_EXCEPTION: the server's own library failed (often I/O)
  1001: 'system', // STD_EXCEPTION
};

/** ClickHouse codes that refuse the rows themselves, by metric label. */
const permanentCodes: Readonly<Record<number, string>> = {
  6: 'parse', // CANNOT_PARSE_TEXT
  8: 'missing_column', // THERE_IS_NO_COLUMN
  16: 'unknown_column', // NO_SUCH_COLUMN_IN_TABLE
  17: 'parse', // DELIMITER_IN_STRING_LITERAL_DOESNT_MATCH
  19: 'type', // SIZE_OF_FIXED_STRING_DOESNT_MATCH
  20: 'type', // NUMBER_OF_COLUMNS_DOESNT_MATCH
  25: 'parse', // CANNOT_PARSE_ESCAPE_SEQUENCE
  26: 'parse', // CANNOT_PARSE_QUOTED_STRING
  27: 'parse', // CANNOT_PARSE_INPUT_ASSERTION_FAILED
  38: 'parse', // CANNOT_PARSE_DATE
  41: 'parse', // CANNOT_PARSE_DATETIME
  53: 'type', // TYPE_MISMATCH
  62: 'syntax', // SYNTAX_ERROR
  69: 'type', // ARGUMENT_OUT_OF_BOUND
  70: 'type', // CANNOT_CONVERT_TYPE
  72: 'parse', // CANNOT_PARSE_NUMBER
  117: 'parse', // INCORRECT_DATA (an unknown field in JSONEachRow among others)
  130: 'parse', // CANNOT_READ_ARRAY_FROM_TEXT
  131: 'type', // TOO_LARGE_STRING_SIZE
  248: 'type', // INVALID_PARTITION_VALUE
  321: 'type', // VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE
  349: 'type', // CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN
  376: 'parse', // CANNOT_PARSE_UUID
  407: 'type', // DECIMAL_OVERFLOW
  441: 'parse', // CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING
  467: 'parse', // CANNOT_PARSE_BOOL
  469: 'type', // VIOLATED_CONSTRAINT
};

/** Node system error codes of a connection that failed or was cut, by metric label. */
const systemCodes: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'network',
  ECONNRESET: 'network',
  ECONNABORTED: 'network',
  EPIPE: 'network',
  EHOSTUNREACH: 'network',
  ENETUNREACH: 'network',
  ENOTFOUND: 'network',
  EAI_AGAIN: 'network',
  ETIMEDOUT: 'timeout',
  ESOCKETTIMEDOUT: 'timeout',
  UND_ERR_SOCKET: 'network',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
};

export function classifyWriteFailure(facts: FailureFacts): FailureVerdict {
  if (facts.name === 'UnreadableMessageError') return { class: 'permanent', reason: 'unreadable' };
  if (facts.name === 'UnsafeInsertError') return { class: 'permanent', reason: 'unsafe_rows' };
  // Written, but not yet copied to the rate detectors (streams/detection-feed.ts): retried, never dead-lettered.
  if (facts.name === 'DetectionFeedError') return { class: 'transient', reason: 'detection_feed' };
  const code = facts.clickhouseCode;
  if (code !== undefined) {
    const transient = transientCodes[code];
    if (transient) return { class: 'transient', reason: transient };
    const permanent = permanentCodes[code];
    if (permanent) return { class: 'permanent', reason: permanent };
    return { class: 'unknown', reason: 'unknown_code' };
  }
  const system = facts.systemCode === undefined ? undefined : systemCodes[facts.systemCode];
  return { class: 'transient', reason: system ?? 'no_code' };
}
