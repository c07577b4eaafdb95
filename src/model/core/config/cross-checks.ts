// Checks of ConfigMap keys against each other, once every key is read: the operator's snippets
// against annotations-risk-level, buffer sizes NGINX checks together, syslog without a host.
// A value that fails goes back to its default with a warning naming the key. What fails only for
// HTTP/2 clients (src/model/checks/http2.ts) is kept, with a warning.
import { defaultSettings } from './defaults.js';
import type { NginxSettings } from './settings.js';
import { busyBuffersProblem, maxTempFileProblem } from '../../checks/proxy-details.js';
import { http2LuaProblem, http2TlsProblem } from '../../checks/http2.js';

/** The operator's snippet keys: Critical, as the snippet annotations are. */
export const SNIPPET_KEYS = {
  'main-snippet': 'mainSnippet',
  'http-snippet': 'httpSnippet',
  'server-snippet': 'serverSnippet',
  'location-snippet': 'locationSnippet',
  'stream-snippet': 'streamSnippet',
} as const satisfies Record<string, keyof NginxSettings>;

export function crossCheck(settings: NginxSettings, warn: (key: string, message: string) => void): void {
  const defaults = defaultSettings();
  if (settings.annotationsRiskLevel !== 'Critical') {
    for (const [key, field] of Object.entries(SNIPPET_KEYS)) {
      if (settings[field] === '') continue;
      warn(key, `${key} is Critical: it applies only with annotations-risk-level Critical (now ${settings.annotationsRiskLevel}); ignored`);
      settings[field] = '';
    }
  }
  const busy = busyBuffersProblem(settings.proxyBusyBuffersSize, settings.proxyBufferSize, settings.proxyBuffersNumber);
  if (busy) {
    warn('proxy-busy-buffers-size', `${busy}; default kept`);
    settings.proxyBusyBuffersSize = defaults.proxyBusyBuffersSize;
  }
  const maxTemp = maxTempFileProblem(settings.proxyMaxTempFileSize, settings.proxyBufferSize);
  if (maxTemp) {
    warn('proxy-max-temp-file-size', `${maxTemp}; default kept`);
    settings.proxyMaxTempFileSize = defaults.proxyMaxTempFileSize;
  }
  if (settings.enableSyslog && settings.syslogHost === '') {
    warn('enable-syslog', 'syslog-host is not set; the logs stay in their files');
    settings.enableSyslog = false;
  }
  if (settings.useHttp2) http2Checks(settings, warn);
}

function http2Checks(settings: NginxSettings, warn: (key: string, message: string) => void): void {
  const tls = http2TlsProblem(settings.sslProtocols, settings.sslCiphers, { protocols: 'ssl-protocols', ciphers: 'ssl-ciphers' });
  if (tls) warn(tls.key, tls.message);
  for (const [key, field] of Object.entries(SNIPPET_KEYS)) {
    // The stream context carries no HTTP request.
    const problem = key === 'stream-snippet' ? null : http2LuaProblem(settings[field]);
    if (problem) warn(key, problem);
  }
  const auth = http2LuaProblem(settings.globalAuthSnippet);
  if (auth) warn('global-auth-snippet', auth);
}
