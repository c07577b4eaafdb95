// The ingress-rx command line: parses arguments with commander and hands each subcommand to
// its module. Subcommand modules are imported lazily so `--help` stays fast.
import { GATEWAY_LISTENER_PORTS_HELP } from './gateway-ports.js';
import { Command, CommanderError, Option } from 'commander';
import { version } from '../version.js';
import { parseAllowedClasses } from '../model/checks/address-policy.js';
import { BUDGET_HELP, DEFAULT_BUDGETS, parseBudgetBytes } from '../model/core/budgets.js';
import { addClusterFlags } from './cluster-flags.js';

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];
const logLevel = () => new Option('--log-level <level>', 'log level').choices(LOG_LEVELS).default('info');
const port = (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new CommanderError(2, 'ingress-rx.port', `not a port: ${v}`);
  return n;
};
const positive = (v: string) => {
  const n = Number(v);
  if (!(n > 0)) throw new CommanderError(2, 'ingress-rx.number', `not a positive number: ${v}`);
  return n;
};

/** `--flag`, `--flag=true` or `--flag=false`, for flags that are on unless turned off. */
const onOff = (v: string) => {
  if (v !== 'true' && v !== 'false') throw new CommanderError(2, 'ingress-rx.bool', `not true or false: ${v}`);
  return v === 'true';
};

const count = (v: string) => {
  if (!/^\d{1,9}$/.test(v.trim())) throw new CommanderError(2, 'ingress-rx.count', `not a whole number: ${v}`);
  return Number(v);
};
const bytes = (v: string) => {
  const n = parseBudgetBytes(v);
  if (n === null) throw new CommanderError(2, 'ingress-rx.bytes', `not a size (bytes, or with k, m or g): ${v}`);
  return n;
};

const allowedClasses = (v: string) => {
  const r = parseAllowedClasses(v);
  if ('error' in r) throw new CommanderError(2, 'ingress-rx.classes', r.error);
  return r;
};

function buildProgram(setExit: (code: number) => void): Command {
  const program = new Command('ingress-rx')
    .description('A Kubernetes Ingress controller for NGINX: a drop-in for ingress-nginx, built on an RxJS actor pipeline.')
    .version(version(), '-v, --version')
    .showHelpAfterError()
    .exitOverride();

  program.command('local')
    .description('Run the controller on this machine: a directory of manifests is the cluster, real NGINX serves on loopback')
    .requiredOption('--manifests <dir>', 'directory of YAML/JSON manifests (watched)')
    .option('--http-port <port>', 'HTTP port', port, 8080)
    .option('--https-port <port>', 'HTTPS port', port, 8443)
    .option('--status-port <port>', 'ingress-nginx\'s status port: accepted and reserved; the control server is a unix socket in the workdir', port, 10246)
    .option('--stream-port <port>', 'stream configuration port (loopback)', port, 10247)
    .option('--healthz-port <port>', 'health and metrics port', port, 10254)
    .option('--default-server-port <port>', 'default server (404) port', port, 8181)
    .option('--enable-ssl-passthrough', 'serve the ssl-passthrough annotation (SNI stream server on the HTTPS port)', false)
    .option('--ssl-passthrough-proxy-port <port>', 'loopback port of NGINX\'s HTTPS servers with --enable-ssl-passthrough', port, 8442)
    .option('--workdir <dir>', 'NGINX prefix: config, logs, temp files (default: a new temporary directory)')
    .option('--configmap <ns/name>', 'the main ConfigMap', '')
    .option('--default-backend-service <ns/name>', 'the Service that answers requests no Ingress serves (ingress-nginx\'s flag; empty: a built-in 404)', '')
    .option('--tcp-services-configmap <ns/name>', 'ConfigMap of TCP services (ingress-nginx\'s flag): keys are ports NGINX listens on at 127.0.0.1, values "namespace/service:port"', '')
    .option('--sync-rate-limit <rate>', 'syncs per second', positive, 0.3)
    .option('--geoip-dir <dir>', 'GeoIP2 databases folder (watched)')
    .option('--resolv-conf <file>', 'the resolv.conf whose nameservers (IP or IP:PORT), search domains and ndots NGINX and Lua resolve names with (ExternalName, auth-url); default /etc/resolv.conf')
    .option('--record <file>', 'record every event and task to an NDJSON log')
    .option('--record-secrets', 'keep Secret data in the recording', false)
    .option('--trace [file]', 'trace every event through the pipeline (Chrome trace-event JSON)')
    .option('--allow-upstream-addresses <classes>', 'node-local and metadata upstream addresses allowed (loopback, unspecified, link-local, metadata; empty: none); the controller\'s own ports never', allowedClasses, allowedClasses('loopback'))
    .option('--host-ownership', 'a host belongs to the namespace of its oldest Ingress; other namespaces\' rules for it are refused', false)
    .option('--enable-dynamic-routes [bool]', 'serve the hosts whose Ingresses Lua can apply per request from a route table, without reloads (docs/dynamic-routes.md); =false gives every host a server block', onOff, true)
    .option('--gateway-listener-ports <list>', `${GATEWAY_LISTENER_PORTS_HELP} Local mode cannot bind a port below 1024: map it.`, '')
    .option('--max-paths-per-ingress <n>', BUDGET_HELP.maxPathsPerIngress, count, DEFAULT_BUDGETS.maxPathsPerIngress)
    .option('--max-paths-per-namespace <n>', BUDGET_HELP.maxPathsPerNamespace, count, DEFAULT_BUDGETS.maxPathsPerNamespace)
    .option('--max-bytes-per-ingress <size>', BUDGET_HELP.maxBytesPerIngress, bytes, DEFAULT_BUDGETS.maxBytesPerIngress)
    .option('--max-bytes-per-namespace <size>', BUDGET_HELP.maxBytesPerNamespace, bytes, DEFAULT_BUDGETS.maxBytesPerNamespace)
    .addOption(logLevel())
    .action(async (opts) => {
      const { runLocal } = await import('./local.js');
      setExit(await runLocal(opts));
    });

  program.command('controller')
    .description('Run in a Kubernetes cluster (ingress-nginx flags; see `ingress-rx controller --help`)')
    .helpOption(false)
    .allowUnknownOption(true)
    .allowExcessArguments(true)
    .argument('[flags...]')
    .action(async (flags: string[]) => {
      const { runController } = await import('./controller.js');
      setExit(await runController(flags));
    });

  program.command('wait-shutdown')
    .description('The preStop hook (/wait-shutdown in the image): SIGTERM to the controller in this container, then wait until NGINX has stopped')
    .action(async () => {
      const { runWaitShutdown } = await import('./wait-shutdown.js');
      setExit(await runWaitShutdown());
    });

  program.command('render')
    .description('Render the model, Lua payloads and nginx.conf of a manifests directory, offline')
    .requiredOption('--manifests <dir>', 'directory of manifests')
    .requiredOption('--out <dir>', 'output directory')
    .option('--configmap <ns/name>', 'the main ConfigMap', '')
    .option('--test', 'run `nginx -t` on the rendered nginx.conf', false)
    .option('--enable-dynamic-routes [bool]', 'as the controller\'s flag: routes.json holds the dynamic hosts; one line per host says which path it takes and why', onOff, true)
    .addOption(logLevel().default('warn'))
    .action(async (opts) => {
      const { runRender } = await import('./render.js');
      setExit(await runRender(opts));
    });

  addClusterFlags(program.command('lint')
    .description('Check manifests (files, directories, or - for a `kubectl get -o yaml` dump on stdin) as the admission webhook would; file:line per finding; exit 1 on errors')
    .argument('<paths...>', 'manifest files or directories, or - for stdin')
    .option('--strict', 'warnings fail too (exit 1)', false)
    .option('--host-ownership', 'as the controller\'s flag: a host belongs to the namespace of its oldest Ingress', false)
    .addOption(new Option('--output <format>', 'text or json').choices(['text', 'json']).default('text')))
    .action(async (paths: string[], opts) => {
      const { runLint } = await import('./lint.js');
      setExit(runLint(paths, opts));
    });

  addClusterFlags(program.command('migrate-report')
    .description('What moving from ingress-nginx changes: every annotation and ConfigMap key in a cluster dump, supported, different or refused')
    .argument('<paths...>', 'a `kubectl get ingress,svc,secret,cm,ingressclass -A -o yaml` dump, manifest files or directories, or - for stdin')
    .addOption(new Option('--output <format>', 'text, markdown or json').choices(['text', 'markdown', 'json']).default('text')))
    .action(async (paths: string[], opts) => {
      const { runMigrateReport } = await import('./migrate-report.js');
      setExit(runMigrateReport(paths, opts));
    });

  program.command('replay')
    .description('Replay a recorded event log through the same pipeline')
    .argument('<file>', 'NDJSON log written by --record')
    .addOption(new Option('--speed <n>', 'play back N times faster than recorded').argParser(positive).conflicts('instant'))
    .option('--instant', 'run in virtual time (no waiting)', false)
    .option('--out <dir>', 'output directory', 'replay-out')
    .option('--nginx-test', 'run `nginx -t` on every distinct rendered config', false)
    .option('--trace [file]', 'trace the replay (Chrome trace-event JSON)')
    .addOption(logLevel().default('warn'))
    .action(async (file: string, opts) => {
      const { runReplay } = await import('./replay.js');
      setExit(await runReplay(file, opts));
    });

  const trace = program.command('trace').description('Work with stream traces');
  trace.command('summary')
    .description('Summarise a trace file: events, drops, bucket waits, syncs, reloads, latency')
    .argument('<file>', 'trace file written by --trace')
    .action(async (file: string) => {
      const { runTraceSummary } = await import('./trace.js');
      setExit(await runTraceSummary(file));
    });

  const dbg = program.command('dbg').description("Inspect a running controller's NGINX (like ingress-nginx's /dbg)")
    .option('--workdir <dir>', "the controller's --workdir (its control socket and token are there)", '/tmp/ingress-rx');
  const dbgRun = async (args: string[], cmd: Command) => {
    const { runDbg } = await import('./dbg.js');
    // `--workdir` may come before the subcommand or (as `dbg quarantine --workdir`) after it.
    const own = Object.fromEntries(Object.entries(cmd.opts()).filter(([, v]) => v !== undefined));
    setExit(await runDbg(args, { ...dbg.opts(), ...own }));
  };
  const backends = dbg.command('backends').description('Backends as NGINX holds them');
  backends.command('list').description('names of all backends').action((_o, c: Command) => dbgRun(['backends', 'list'], c));
  backends.command('all').description('all backends as JSON').action((_o, c: Command) => dbgRun(['backends', 'all'], c));
  backends.command('get').description('one backend as JSON').argument('<name>').action((name: string, _o, c: Command) => dbgRun(['backends', 'get', name], c));
  dbg.command('certs').description('certificates').command('get').argument('<host>').description('the certificate served for a host')
    .action((host: string, _o, c: Command) => dbgRun(['certs', 'get', host], c));
  dbg.command('conf').description('the running nginx.conf').option('--host <host>', "only that server's block")
    .action((_o, c: Command) => dbgRun(['conf'], c));
  dbg.command('general').description('general (global) dynamic configuration').action((_o, c: Command) => dbgRun(['general'], c));
  dbg.command('ingresses').description('the Ingresses the controller does not serve, and why').action((_o, c: Command) => dbgRun(['ingresses'], c));
  dbg.command('routes').description('which hosts are dynamic (served by the Lua router) and why the others are static')
    .option('--workdir <dir>', "the controller's --workdir")
    .action((_o, c: Command) => dbgRun(['routes'], c));
  dbg.command('quarantine').description('objects NGINX refuses, set aside while everything else applies')
    .option('--workdir <dir>', "the controller's --workdir")
    .action((_o, c: Command) => dbgRun(['quarantine'], c));
  dbg.command('takeovers').description("Ingresses that take another namespace's traffic on a shared host or name, and whose")
    .option('--workdir <dir>', "the controller's --workdir")
    .action((_o, c: Command) => dbgRun(['takeovers'], c));

  return program;
}

/**
 * The process entry (bin/ingress-rx, and the tests' cli-entry): runs the CLI and exits with its
 * code. A command that failed exits at once: a handle left open by a start that failed half way
 * (a timer, a watcher, a socket) must not keep the process waiting forever after its error.
 */
export async function runProcess(argv: string[]): Promise<void> {
  const code = await main(argv);
  process.exitCode = code;
  if (code !== 0) process.exit(code);
}

/** Runs the CLI; returns the process exit code. */
export async function main(argv: string[]): Promise<number> {
  let code = 0;
  const program = buildProgram((c) => { code = c; });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    process.stderr.write(`ingress-rx: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    return 1;
  }
  return code;
}
