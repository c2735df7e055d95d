import path from 'node:path';

/**
 * The MMDB twin of the packaged country CSV (`@ip-location-db/geo-whois-asn-country-mmdb`, the
 * same release, a dev dependency): an operator's MMDB file in the tests, and what Debian's
 * mmdblookup reads to check both the range table and the MMDB reader.
 */
export const packagedCountryMmdb = (): string =>
  path.join(path.dirname(require.resolve('@ip-location-db/geo-whois-asn-country-mmdb/package.json')), 'geo-whois-asn-country.mmdb');
