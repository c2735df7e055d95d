import { defineSettings, integer, optionalText, setting } from '../../core/settings';

/** Enrichment: the operator's own address databases, and how often their files are checked for a change. */
export const enrichmentSettings = defineSettings(
  'Enrichment',
  {
    ENRICHMENT_COUNTRY_MMDB: setting(optionalText(), 'an MMDB file with countries (MaxMind GeoIP2/GeoLite2 Country, IPinfo country or ip-location-db), reloaded when it changes (see [enrichment](enrichment.md))', 'the packaged geo-whois-asn-country'),
    ENRICHMENT_ASN_MMDB: setting(optionalText(), 'an MMDB file with AS numbers (MaxMind GeoLite2 ASN, IPinfo ASN), reloaded when it changes; AS names still come from the packaged CSV', 'the packaged ip-location-db asn CSV'),
    ENRICHMENT_CACHE_DIR: setting(optionalText(), "where the packaged CSVs' parsed range tables are kept, so a start reads them in milliseconds instead of parsing the CSVs (checked on read; a refused or missing file is parsed and written again)", '`$DATA_DIR/enrichment-cache`'),
    ENRICHMENT_RELOAD_CHECK_MS: setting(integer(100, 3_600_000).default(10_000), 'how often the address database files are checked for a change (size or modification time)'),
    ENRICHMENT_NETWORKS_REFRESH_MS: setting(integer(100, 600_000).default(2_000), "how often a process that ingests flows reads the workspaces' networks again (a change made through it applies at once)"),
  },
  (e) => ({
    enrichment: {
      countryMmdb: e.ENRICHMENT_COUNTRY_MMDB,
      asnMmdb: e.ENRICHMENT_ASN_MMDB,
      reloadCheckMs: e.ENRICHMENT_RELOAD_CHECK_MS,
      cacheDir: e.ENRICHMENT_CACHE_DIR,
      networksRefreshMs: e.ENRICHMENT_NETWORKS_REFRESH_MS,
    },
  }),
);
