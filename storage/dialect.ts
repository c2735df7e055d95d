import { str } from './sql';

/**
 * One set of tables and queries over two ClickHouse generations, told apart
 * by `version()` when the schema is migrated:
 *
 * | | current (22.x and later, chDB) | legacy (Debian's 18.16) |
 * |---|---|---|
 * | flow times | `DateTime64(3)` | epoch ms in `Int64` |
 * | flow addresses | `IPv6` (IPv4 stored mapped, shown dotted) | `String` |
 * | org, protocol | `LowCardinality(String)` | `String` |
 * | rollup buckets | `DateTime` | epoch ms in `Int64` |
 * | codecs | per column | none |
 * | retention | `TTL`, whole parts dropped | the retention job drops daily partitions |
 *
 * Repositories build every flow query through this object, so no query is
 * written twice. Values given to it are epoch milliseconds and address text,
 * as the rest of the service speaks them.
 */
export type Generation = 'current' | 'legacy';

export interface Dialect {
  readonly generation: Generation;
  /** Column type of flow times. */
  readonly timeType: string;
  /** Column type of flow addresses. */
  readonly addressType: string;
  /** Column type of low-cardinality labels (org, protocol). */
  readonly labelType: string;
  /** A column codec clause, or nothing where the server has none. */
  codec(spec: string): string;
  /** A data-skipping index declaration to append to a column list, or nothing where the server has none. */
  skipIndex(declaration: string): string;
  /** Settings every insert takes: the rollup views of a flow insert run in parallel where the server can. */
  readonly insertSettings: Readonly<Record<string, number>>;
  /** A TTL clause on a time column, or nothing (legacy retention drops partitions). */
  ttl(timeColumn: string, days: number): string;
  /** A flow time column as epoch milliseconds (Int64). */
  msOf(column: string): string;
  /** Epoch milliseconds as a literal of the flow time type. */
  timeLiteral(ms: number): string;
  /** An address as a literal of the flow address type. */
  addressLiteral(text: string): string;
  /** A flow address column as the text clients see (IPv4 dotted, IPv6 compressed). */
  addressText(column: string): string;
  /** The day partition of a flow time column. */
  dayOf(column: string): string;
  /** Column type of a rollup's bucket start. */
  readonly bucketType: string;
  /** The start of the `seconds`-long bucket holding a flow time or a finer bucket, as a bucket. */
  bucketOf(column: string, seconds: number): string;
  /** A bucket column as epoch milliseconds. */
  bucketMs(column: string): string;
  /** Epoch milliseconds (a bucket start) as a literal of the bucket type. */
  bucketLiteral(ms: number): string;
  /** The day partition of a bucket column. */
  bucketDayOf(column: string): string;
  /** The server's clock as a flow time (the time a rollup receipt is filed under). */
  readonly nowTime: string;
  /** The absent address (`::`) as a value of the flow address type. */
  readonly noAddress: string;
  /**
   * A predicate: an address column of the flows or a rollup lies within
   * [first, last], both bounds as eight full hex groups (IPv4 in its mapped
   * form, see core/flow-query.ts). Addresses compare as their 16 bytes, so an
   * exact address or a CIDR prefix matches however the address was spelled
   * when stored; an absent address (`::`, or '' on 18.16) is `::`.
   */
  addressInRange(column: string, first: string, last: string): string;
}

const epochMs = (ms: number) => {
  if (!Number.isSafeInteger(ms)) throw new TypeError(`not a time in epoch milliseconds: ${ms}`);
  return String(ms);
};

const current: Dialect = {
  generation: 'current',
  timeType: 'DateTime64(3)',
  addressType: 'IPv6',
  labelType: 'LowCardinality(String)',
  codec: (spec) => `CODEC(${spec})`,
  skipIndex: (declaration) => `, INDEX ${declaration}`,
  insertSettings: { parallel_view_processing: 1 },
  ttl: (column, days) => `TTL toDateTime(${column}) + INTERVAL ${Math.trunc(days)} DAY`,
  msOf: (column) => `toUnixTimestamp64Milli(${column})`,
  timeLiteral: (ms) => `fromUnixTimestamp64Milli(toInt64(${epochMs(ms)}))`,
  addressLiteral: (text) => `toIPv6(${str(text)})`,
  addressText: (column) => `replaceRegexpOne(IPv6NumToString(${column}), '^::ffff:([0-9.]+)$', '\\\\1')`,
  dayOf: (column) => `toDate(${column})`,
  bucketType: 'DateTime',
  bucketOf: (column, seconds) => `toDateTime(toStartOfInterval(${column}, INTERVAL ${Math.trunc(seconds)} SECOND))`,
  bucketMs: (column) => `toInt64(toUnixTimestamp(${column})) * 1000`,
  bucketLiteral: (ms) => `toDateTime(${Math.floor(Number(epochMs(ms)) / 1000)})`,
  bucketDayOf: (column) => `toDate(${column})`,
  nowTime: 'now()',
  noAddress: "toIPv6('::')",
  // IPv6 columns compare by their bytes, and hold IPv4 mapped.
  addressInRange: (column, first, last) =>
    first === last ? `${column} = toIPv6(${str(first)})` : `(${column} >= toIPv6(${str(first)}) AND ${column} <= toIPv6(${str(last)}))`,
};

/**
 * An address String column of 18.16 as the 16 bytes of its IPv6 form: that
 * server's IPv6StringToNum reads no dotted IPv4 (it answers zeros), so IPv4
 * text is mapped with IPv4ToIPv6. FixedStrings compare as unsigned bytes.
 */
const legacyAddressBytes = (column: string) =>
  `if(position(${column}, ':') = 0 AND ${column} != '', IPv4ToIPv6(IPv4StringToNum(${column})), IPv6StringToNum(${column}))`;

const legacy: Dialect = {
  generation: 'legacy',
  timeType: 'Int64',
  addressType: 'String',
  labelType: 'String',
  codec: () => '',
  skipIndex: () => '',
  insertSettings: {},
  ttl: () => '',
  msOf: (column) => column,
  timeLiteral: epochMs,
  addressLiteral: (text) => str(text),
  addressText: (column) => column,
  dayOf: (column) => `intDiv(${column}, 86400000)`,
  bucketType: 'Int64',
  bucketOf: (column, seconds) => `intDiv(${column}, ${Math.trunc(seconds) * 1000}) * ${Math.trunc(seconds) * 1000}`,
  bucketMs: (column) => column,
  bucketLiteral: epochMs,
  bucketDayOf: (column) => `intDiv(${column}, 86400000)`,
  nowTime: '(toInt64(toUnixTimestamp(now())) * 1000)',
  noAddress: "''",
  addressInRange: (column, first, last) => {
    const bytes = legacyAddressBytes(column);
    return first === last
      ? `${bytes} = IPv6StringToNum(${str(first)})`
      : `(${bytes} >= IPv6StringToNum(${str(first)}) AND ${bytes} <= IPv6StringToNum(${str(last)}))`;
  },
};

/** The dialect of a server that reports this `version()`. */
/** The dialect's insert settings as an insert's SETTINGS clause, with a leading space; '' when it has none. */
export function insertSettingsClause(dialect: Dialect): string {
  const settings = Object.entries(dialect.insertSettings).map(([name, value]) => `${name} = ${value}`);
  return settings.length > 0 ? ` SETTINGS ${settings.join(', ')}` : '';
}

export function dialectOf(version: string): Dialect {
  const major = Number(version.split('.')[0]);
  return Number.isFinite(major) && major < 19 ? legacy : current;
}
