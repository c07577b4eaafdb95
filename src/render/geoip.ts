// GeoIP2: when use-geoip2 is on and the module and GeoLite2 databases are present, the
// variables ingress-nginx defines ($geoip2_city_country_code, ...); otherwise a warning.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { NginxSettings } from '../model/core/config/settings.js';
import type { NginxRuntime } from './runtime.js';
import { quoteLiteral } from './filters.js';

export interface Geoip2Setup {
  enabled: boolean;
  /** The geoip2 blocks for the http context (indented). */
  directives: string;
  warnings: string[];
}

const DATABASES: Record<string, [string, string][]> = {
  'GeoLite2-City.mmdb': [
    ['geoip2_city_country_code', 'country iso_code'],
    ['geoip2_city_country_name', 'country names en'],
    ['geoip2_city', 'city names en'],
    ['geoip2_postal_code', 'postal code'],
    ['geoip2_dma_code', 'location metro_code'],
    ['geoip2_latitude', 'location latitude'],
    ['geoip2_longitude', 'location longitude'],
    ['geoip2_time_zone', 'location time_zone'],
    ['geoip2_region_code', 'subdivisions 0 iso_code'],
    ['geoip2_region_name', 'subdivisions 0 names en'],
    ['geoip2_subregion_code', 'subdivisions 1 iso_code'],
    ['geoip2_subregion_name', 'subdivisions 1 names en'],
  ],
  'GeoLite2-Country.mmdb': [
    ['geoip2_country_code', 'country iso_code'],
    ['geoip2_country_name', 'country names en'],
    ['geoip2_continent_code', 'continent code'],
    ['geoip2_continent_name', 'continent names en'],
  ],
  'GeoLite2-ASN.mmdb': [
    ['geoip2_asn', 'autonomous_system_number'],
    ['geoip2_org', 'autonomous_system_organization'],
  ],
};

export function geoip2Setup(settings: NginxSettings, runtime: NginxRuntime, exists: (p: string) => boolean = existsSync): Geoip2Setup {
  const off = (warnings: string[]): Geoip2Setup => ({ enabled: false, directives: '', warnings });
  if (!settings.useGeoip2) return off([]);
  const module = join(runtime.modulesDir, 'ngx_http_geoip2_module.so');
  if (!exists(module)) return off([`use-geoip2 is on but ${module} is missing: GeoIP2 variables are not defined`]);
  const present = Object.keys(DATABASES).filter((db) => exists(join(runtime.geoipDir, db)));
  if (present.length === 0) {
    return off([`use-geoip2 is on but no GeoLite2 database (${Object.keys(DATABASES).join(', ')}) is in ${runtime.geoipDir}: GeoIP2 variables are not defined`]);
  }
  let directives = '';
  for (const db of present) {
    directives += `    geoip2 ${quoteLiteral(join(runtime.geoipDir, db), 'geoip database')} {\n`;
    for (const [variable, path] of DATABASES[db]!) directives += `        $${variable} source=$remote_addr ${path};\n`;
    directives += '    }\n';
  }
  return { enabled: true, directives, warnings: [] };
}
