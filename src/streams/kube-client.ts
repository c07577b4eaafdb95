// API clients whose requests share kept-alive connections. client-node 1.4 gives every request an
// Agent of its own, so each opens a new connection (and, to a real API server, a new TLS
// handshake): the status writer's GET and PUT per Ingress, 20k requests at 10k Ingresses, spent
// more CPU connecting than on the requests. Same auth and TLS settings; one Agent per settings.
import http from 'node:http';
import https from 'node:https';
import { ServerConfiguration, createConfiguration, type Configuration, type KubeConfig, type RequestContext, type SecurityAuthentication } from '@kubernetes/client-node';

/** The TLS settings client-node copies into each request's Agent: equal settings share an Agent. */
const AGENT_SETTINGS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

export function makeKeepAliveApiClient<T>(kc: KubeConfig, api: new (config: Configuration) => T): T {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('No active cluster!');
  return new api(createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: keepAliveAuthentication(kc) },
  }));
}

/** kc's authentication (headers, client certificates, TLS checks), with its per-request Agent swapped for a kept-alive one. */
export function keepAliveAuthentication(kc: KubeConfig): SecurityAuthentication {
  let shared: { settings: Record<string, unknown>; agent: http.Agent } | undefined;
  return {
    getName: () => 'kubeconfig, kept-alive connections',
    async applySecurityAuthentication(context: RequestContext) {
      await kc.applySecurityAuthentication(context);
      const fresh = context.getAgent();
      // A proxy's Agent (SOCKS, HTTP CONNECT) is left as it is.
      if (!fresh || (fresh.constructor !== http.Agent && fresh.constructor !== https.Agent)) return;
      const settings = settingsOf(fresh);
      if (!shared || shared.agent.constructor !== fresh.constructor || !sameSettings(shared.settings, settings)) {
        shared?.agent.destroy();
        const options = { ...settings, keepAlive: true };
        shared = { settings, agent: fresh instanceof https.Agent ? new https.Agent(options) : new http.Agent(options) };
      }
      context.setAgent(shared.agent);
      fresh.destroy();
    },
  };
}

function settingsOf(agent: http.Agent): Record<string, unknown> {
  const options = (agent as http.Agent & { options?: Record<string, unknown> }).options ?? {};
  const out: Record<string, unknown> = {};
  for (const k of AGENT_SETTINGS) if (options[k] !== undefined) out[k] = options[k];
  return out;
}

function sameSettings(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  for (const k of AGENT_SETTINGS) {
    const x = a[k];
    const y = b[k];
    if (Buffer.isBuffer(x) && Buffer.isBuffer(y) ? !x.equals(y) : x !== y) return false;
  }
  return true;
}
