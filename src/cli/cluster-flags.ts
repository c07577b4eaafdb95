// The controller flags `lint` and `migrate-report` take to read manifests as the controller would
// (class, namespace, ConfigMaps), with the controller's names; light enough for `--help`.
import { Command, Option } from 'commander';
import { defaultStoreOptions } from '../store/store.js';
import type { StoreOptions } from '../store/types.js';
import { DEFAULT_BUDGETS, type Budgets } from '../model/core/budgets.js';

export interface ClusterFlags {
  ingressClass: string;
  controllerClass: string;
  watchIngressWithoutClass: boolean;
  ingressClassByName: boolean;
  watchNamespace: string;
  disableCatchAll: boolean;
  configmap: string;
  tcpServicesConfigmap: string;
  udpServicesConfigmap: string;
  defaultSslCertificate: string;
  defaultBackendService: string;
  annotationsPrefix: string;
  maxPathsPerIngress: number;
  maxPathsPerNamespace: number;
}

/** The controller flags that decide what the files mean. */
export function addClusterFlags(cmd: Command): Command {
  const d = defaultStoreOptions();
  return cmd
    .option('--ingress-class <name>', 'the class served (annotation and IngressClass name)', d.ingressClass)
    .option('--controller-class <name>', 'IngressClass spec.controller served', d.controllerClass)
    .option('--no-watch-ingress-without-class', 'skip Ingresses with no class (default: lint them, as local mode serves them)')
    .option('--ingress-class-by-name', 'an ingressClassName equal to --ingress-class is ours without an IngressClass', false)
    .option('--watch-namespace <ns>', 'only this namespace', '')
    .option('--disable-catch-all', 'Ingresses with a spec.defaultBackend are not served', false)
    .option('--configmap <ns/name>', 'the main ConfigMap (ingress-nginx\'s: e.g. ingress-nginx/ingress-nginx-controller)', '')
    .option('--tcp-services-configmap <ns/name>', 'the TCP services ConfigMap', '')
    .option('--udp-services-configmap <ns/name>', 'the UDP services ConfigMap', '')
    .option('--default-ssl-certificate <ns/name>', 'the default certificate\'s Secret', '')
    .option('--default-backend-service <ns/name>', 'the default backend Service', '')
    .addOption(new Option('--annotations-prefix <prefix>', 'annotation prefix').default(d.annotationsPrefix))
    .option('--max-paths-per-ingress <n>', 'the controller\'s path budget per Ingress (0: none)', count, DEFAULT_BUDGETS.maxPathsPerIngress)
    .option('--max-paths-per-namespace <n>', 'the controller\'s path budget per namespace (0: none)', count, DEFAULT_BUDGETS.maxPathsPerNamespace);
}

function count(v: string): number {
  if (!/^\d{1,9}$/.test(v.trim())) throw new Error(`not a whole number: ${v}`);
  return Number(v);
}

/** The budgets the files are read against: the paths ones from the flags (bytes need the data plane's render). */
export function budgetsOf(f: ClusterFlags): Budgets {
  return { ...DEFAULT_BUDGETS, maxPathsPerIngress: f.maxPathsPerIngress, maxPathsPerNamespace: f.maxPathsPerNamespace };
}

export function storeOptionsOf(f: ClusterFlags): StoreOptions {
  return {
    ...defaultStoreOptions(),
    ingressClass: f.ingressClass,
    controllerClass: f.controllerClass,
    watchIngressWithoutClass: f.watchIngressWithoutClass,
    ingressClassByName: f.ingressClassByName,
    watchNamespaces: f.watchNamespace ? [f.watchNamespace] : [],
    disableCatchAll: f.disableCatchAll,
    configmap: f.configmap,
    tcpServicesConfigmap: f.tcpServicesConfigmap,
    udpServicesConfigmap: f.udpServicesConfigmap,
    defaultSSLCertificate: f.defaultSslCertificate,
    defaultBackendService: f.defaultBackendService,
    annotationsPrefix: f.annotationsPrefix,
  };
}
