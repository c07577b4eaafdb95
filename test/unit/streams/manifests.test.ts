// The manifests source: a directory of YAML/JSON manifests read as a cluster — one-shot reads of
// the fixtures, then live add/edit/delete of files while subscribed, with the events awaited.
import { silentLogger } from '../../../src/log.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { closeSync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { VirtualAction, VirtualTimeScheduler } from 'rxjs';
import { manifestsSource, readManifests, type ManifestError } from '../../../src/streams/manifests.js';
import { endpointsToSlices, parseManifestFile } from '../../../src/streams/manifests-parse.js';
import { RESOURCE_KINDS, type SourceEvent } from '../../../src/store/events.js';
import type { ConfigMap, EndpointSlice, Ingress, Secret } from '../../../src/store/kube-types.js';
import { waitFor } from '../../support/wait.js';

const FIXTURES = new URL('../../fixtures/manifests/', import.meta.url).pathname;

function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => { lines.push(JSON.parse(s)); } });
  return { logger, lines };
}

const port = (e: SourceEvent) => (e.object as unknown as { spec: { ports: Array<{ port: number }> } }).spec.ports[0]!.port;
const byKey = (events: SourceEvent[], kind: string, key: string) => events.find((e) => e.kind === kind && e.key === key);

// ---- one-shot reads

const read = suite('manifests: readManifests');

read('reads the fixture cluster in RESOURCE_KINDS order with cluster defaults', () => {
  const t = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
  const { events, errors } = readManifests(join(FIXTURES, 'basic'), { now: () => t });
  assert.equal(errors, []);
  assert.ok(events.every((e) => e.type === 'add'));
  const order = events.map((e) => RESOURCE_KINDS.indexOf(e.kind));
  assert.equal(order, [...order].sort((a, b) => a - b), 'kinds in order, Ingresses last');
  assert.equal(events.map((e) => `${e.kind} ${e.key}`), [
    'Namespace ingress-nginx',
    'IngressClass nginx',
    'ConfigMap ingress-nginx/ingress-nginx-controller',
    'Secret default/basic-auth',
    'Secret default/echo-tls',
    'Service default/echo',
    'Service web/static',
    'EndpointSlice default/echo',
    'EndpointSlice web/static-abc12',
    'Ingress default/echo',
    'Ingress web/static',
  ]);
  const echo = byKey(events, 'Ingress', 'default/echo')!.object as Ingress;
  assert.is(echo.metadata.namespace, 'default');
  assert.is(echo.metadata.creationTimestamp, '2026-01-02T03:04:05Z', 'first seen, at second resolution');
  assert.match(echo.metadata.uid!, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  const again = readManifests(join(FIXTURES, 'basic'));
  assert.is(byKey(again.events, 'Ingress', 'default/echo')!.object.metadata.uid, echo.metadata.uid, 'uid is stable');
  const versions = events.map((e) => Number(e.object.metadata.resourceVersion));
  assert.equal(new Set(versions).size, versions.length, 'resourceVersions distinct');
  const statik = byKey(events, 'Ingress', 'web/static')!.object as Ingress;
  assert.is(statik.metadata.creationTimestamp, '2024-03-01T10:00:00Z', 'given timestamp kept');
  assert.is(echo.spec.rules![0]!.http!.paths[0]!.path, '', 'the source does not normalise; the store does');
});

read('projects Endpoints, Secrets (stringData), Lists in JSON and unquoted ConfigMap values', () => {
  const { events } = readManifests(join(FIXTURES, 'basic'));
  const slice = byKey(events, 'EndpointSlice', 'default/echo')!.object as EndpointSlice;
  assert.is(slice.metadata.labels!['kubernetes.io/service-name'], 'echo');
  assert.is(slice.addressType, 'IPv4');
  assert.equal(slice.endpoints, [
    { addresses: ['10.0.0.1'], conditions: { ready: true } },
    { addresses: ['10.0.0.2'], conditions: { ready: true }, nodeName: 'node-a' },
    { addresses: ['10.0.0.3'], conditions: { ready: false } },
  ]);
  assert.equal(slice.ports, [{ name: 'http', port: 8080, protocol: 'TCP' }]);
  const auth = byKey(events, 'Secret', 'default/basic-auth')!.object as Secret;
  assert.is(Buffer.from(auth.data!.auth!, 'base64').toString(), 'user:$apr1$x$y');
  assert.is((auth as { stringData?: unknown }).stringData, undefined);
  assert.is(auth.type, 'Opaque');
  const tls = byKey(events, 'Secret', 'default/echo-tls')!.object as Secret;
  assert.equal(tls.data, { 'tls.crt': 'Y2VydA==', 'tls.key': 'a2V5' });
  const cm = byKey(events, 'ConfigMap', 'ingress-nginx/ingress-nginx-controller')!.object as ConfigMap;
  assert.equal(cm.data, { 'use-forwarded-headers': 'true', 'proxy-body-size': '8m' });
  assert.is(events.some((e) => e.object.kind === 'Deployment'), false, 'unsupported kinds ignored');
});

read('a malformed file is reported with file and line; the rest still loads', () => {
  const { events, errors } = readManifests(join(FIXTURES, 'malformed'));
  assert.equal(events.map((e) => `${e.kind} ${e.key}`).sort(), ['ConfigMap default/fine-before-the-error', 'Service default/good']);
  assert.is(errors.length, 2);
  const [syntax, nameless] = errors as [ManifestError, ManifestError];
  assert.match(syntax.file, /malformed\/broken\.yaml$/);
  assert.ok(syntax.line >= 13 && syntax.line <= 14, `line ${syntax.line}`);
  assert.match(syntax.reason, /YAML syntax error/);
  assert.is(nameless.line, 15);
  assert.match(nameless.reason, /Secret has no metadata\.name/);
});

read('a missing directory is an error, not a crash', () => {
  const { events, errors } = readManifests('/nonexistent/manifests');
  assert.equal(events, []);
  assert.is(errors.length, 1);
  assert.match(errors[0]!.reason, /cannot read directory/);
});

const parse = suite('manifests: parsing');

parse('JSON syntax errors carry the line', () => {
  const r = parseManifestFile('x.json', '{\n  "kind": "Service",\n  "metadata": {,\n}');
  assert.is(r.objects.length, 0);
  assert.is(r.errors[0]!.line, 3);
});

parse('wrong field types name the field; other documents survive', () => {
  const text = [
    'kind: Ingress', 'metadata: {name: a}', 'spec: {rules: oops}', '---',
    'kind: Service', 'metadata: {name: b, labels: {x: {y: 1}}}', '---',
    'kind: ConfigMap', 'metadata: {name: c, namespace: n}', 'data: {k: v}',
  ].join('\n');
  const r = parseManifestFile('f.yaml', text);
  assert.equal(r.objects.map((o) => o.key), ['n/c']);
  assert.equal(r.errors.map((e) => [e.line, e.reason]), [
    [1, 'Ingress a: spec.rules must be a list'],
    [5, 'Service b: metadata.labels.x must be a string'],
  ]);
});

parse('a name or namespace the API server refuses is refused by name; the other objects are kept', () => {
  const text = [
    'kind: Ingress', 'metadata: {name: "web\\tb", namespace: app}', '---',
    'kind: Service', 'metadata: {name: Web, namespace: app}', '---',
    'kind: Secret', 'metadata: {name: tls, namespace: "team/x"}', '---',
    'kind: ConfigMap', `metadata: {name: ${'a'.repeat(254)}}`, '---',
    'kind: Ingress', 'metadata: {name: web.v2-0, namespace: app-1}',
  ].join('\n');
  const r = parseManifestFile('f.yaml', text);
  assert.equal(r.objects.map((o) => o.key), ['app-1/web.v2-0']);
  assert.equal(r.errors.map((e) => e.line), [1, 4, 7, 10]);
  assert.match(r.errors[0]!.reason, /^Ingress web\tb: metadata\.name "web\\tb" is not a DNS-1123 subdomain .*; refused$/);
  assert.match(r.errors[1]!.reason, /metadata\.name "Web" is not a DNS-1123 subdomain/);
  assert.match(r.errors[2]!.reason, /^Secret tls: metadata\.namespace "team\/x" is not a DNS-1123 label/);
  assert.match(r.errors[3]!.reason, /at most 253/);
});

parse('re-parsing with the cache reuses unchanged documents and keeps lines right', () => {
  const docA = 'kind: ConfigMap\nmetadata: {name: a}\ndata:\n  script: |\n    echo ---\n     ---\n';
  const docB = '---\nkind: ConfigMap\nmetadata: {name: b}\n';
  const first = parseManifestFile('f.yaml', docA + docB);
  assert.equal(first.objects.map((o) => [o.key, o.line]), [['default/a', 1], ['default/b', 8]]);
  assert.is((first.objects[0]!.object as ConfigMap).data!.script, 'echo ---\n ---\n');
  const second = parseManifestFile('f.yaml', '# a comment\n# another\n' + docA.replace('name: a', 'name: a2') + docB, first.cache);
  assert.equal(second.objects.map((o) => [o.key, o.line]), [['default/a2', 3], ['default/b', 10]]);
  assert.is(second.objects[1]!.object, first.objects[1]!.object, 'unchanged document not parsed again');
  assert.is.not(second.objects[0]!.object, first.objects[0]!.object);
  const broken = parseManifestFile('f.yaml', docA + '---\nkind: [\n' + docB, second.cache);
  assert.equal(broken.errors.map((e) => e.line), [9]);
  assert.equal(broken.objects.map((o) => o.line), [1, 10]);
});

parse('extensions/v1beta1 backends become networking/v1 ones', () => {
  const text = 'kind: Ingress\nmetadata: {name: a}\nspec:\n  backend: {serviceName: d, servicePort: 80}\n  rules:\n  - http:\n      paths:\n      - path: /\n        backend: {serviceName: s, servicePort: http}\n';
  const ing = parseManifestFile('f.yaml', text).objects[0]!.object as Ingress;
  assert.equal(ing.spec.defaultBackend, { service: { name: 'd', port: { number: 80 } } });
  assert.equal(ing.spec.rules![0]!.http!.paths[0]!.backend, { service: { name: 's', port: { name: 'http' } } });
});

parse('Endpoints with several subsets and families become several slices', () => {
  const slices = endpointsToSlices({
    kind: 'Endpoints',
    metadata: { name: 'db', namespace: 'data' },
    subsets: [
      { addresses: [{ ip: '10.0.0.1' }, { ip: 'fd00::1' }], ports: [{ port: 5432 }] },
      { notReadyAddresses: [{ ip: '10.0.0.2' }], ports: [{ name: 'metrics', port: 9187, protocol: 'TCP' }] },
    ],
  });
  assert.equal(slices.map((s) => [s.metadata.name, s.addressType, s.endpoints!.length, s.metadata.labels!['kubernetes.io/service-name']]), [
    ['db-0', 'IPv4', 1, 'db'], ['db-1', 'IPv6', 1, 'db'], ['db-2', 'IPv4', 1, 'db'],
  ]);
  assert.equal(endpointsToSlices({ kind: 'Endpoints', metadata: { name: 'none', namespace: 'x' } })[0]!.endpoints, []);
});

// ---- live

const live = suite('manifests: live directory');

function liveDir() {
  const dir = mkdtempSync(join(tmpdir(), 'ingress-rx-manifests-'));
  const events: SourceEvent[] = [];
  const errors: ManifestError[] = [];
  const { logger, lines } = capturingLogger();
  const write = (rel: string, text: string) => writeFileSync(join(dir, rel), text);
  const start = (debounceMs = 20) => manifestsSource({ dir, logger, debounceMs, onError: (e) => errors.push(e) })
    .subscribe((e) => events.push(e));
  /** Waits for `n` more events than `from`, then for a sentinel edit, so nothing else trails. */
  const settle = async (from: number, n: number) => {
    await waitFor(() => events.length >= from + n, { what: `${n} events` });
    const mark = events.length;
    const sentinel = `sentinel-${mark}`;
    write('zz-sentinel.yaml', `kind: ConfigMap\nmetadata: {name: s}\ndata: {v: ${sentinel}}\n`);
    await waitFor(() => events.some((e, i) => i >= mark && e.key === 'default/s' && (e.object as ConfigMap).data?.v === sentinel), { what: 'sentinel' });
    return events.slice(from).filter((e) => e.key !== 'default/s');
  };
  return { dir, events, errors, lines, write, start, settle, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const svc = (name: string, port = 80) => `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\nspec:\n  ports:\n  - port: ${port}\n`;

live('the initial state is one synchronous burst', () => {
  const d = liveDir();
  try {
    d.write('a.yaml', `${svc('a')}---\n${svc('b')}`);
    d.write('c.json', JSON.stringify({ kind: 'Namespace', metadata: { name: 'c' } }));
    const sub = d.start();
    try {
      assert.equal(d.events.map((e) => `${e.type} ${e.kind} ${e.key}`), ['add Namespace c', 'add Service default/a', 'add Service default/b']);
    } finally {
      sub.unsubscribe();
    }
  } finally {
    d.cleanup();
  }
});

live('onInitialState is called once, after the initial burst, also for an empty directory', () => {
  for (const files of [{ 'a.yaml': svc('a') }, {}] as Array<Record<string, string>>) {
    const d = liveDir();
    try {
      for (const [f, text] of Object.entries(files)) d.write(f, text);
      const seen: string[] = [];
      const sub = manifestsSource({ dir: d.dir, logger: silentLogger(), onInitialState: () => seen.push('initial') })
        .subscribe((e) => seen.push(e.key));
      sub.unsubscribe();
      assert.equal(seen, [...Object.keys(files).map(() => 'default/a'), 'initial']);
    } finally {
      d.cleanup();
    }
  }
});

live('add, edit and delete files while subscribed', async () => {
  const d = liveDir();
  const sub = d.start();
  try {
    d.write('echo.yaml', `${svc('echo')}---\n${svc('extra')}`);
    let got = await d.settle(0, 2);
    assert.equal(got.map((e) => `${e.type} ${e.key}`), ['add default/echo', 'add default/extra']);
    const first = got[0]!.object;

    let mark = d.events.length;
    d.write('echo.yaml', `${svc('echo', 8080)}---\n${svc('extra')}`);
    got = await d.settle(mark, 1);
    assert.equal(got.map((e) => `${e.type} ${e.key}`), ['update default/echo']);
    const updated = got[0]!;
    assert.is(updated.old, first);
    assert.is(updated.object.metadata.uid, first.metadata.uid);
    assert.is(updated.object.metadata.creationTimestamp, first.metadata.creationTimestamp);
    assert.ok(Number(updated.object.metadata.resourceVersion) > Number(first.metadata.resourceVersion));

    mark = d.events.length;
    d.write('echo.yaml', svc('echo', 8080));
    got = await d.settle(mark, 1);
    assert.equal(got.map((e) => `${e.type} ${e.key}`), ['delete default/extra'], 'two objects to one: one delete');

    mark = d.events.length;
    mkdirSync(join(d.dir, 'nested', 'deeper'), { recursive: true });
    d.write('nested/deeper/web.yml', svc('web'));
    got = await d.settle(mark, 1);
    assert.equal(got.map((e) => `${e.type} ${e.key}`), ['add default/web'], 'new subdirectories are watched');

    mark = d.events.length;
    unlinkSync(join(d.dir, 'echo.yaml'));
    rmSync(join(d.dir, 'nested'), { recursive: true });
    got = await d.settle(mark, 2);
    assert.equal(got.map((e) => `${e.type} ${e.key}`).sort(), ['delete default/echo', 'delete default/web']);
  } finally {
    sub.unsubscribe();
    d.cleanup();
  }
});

live('an object moved between files is not deleted; a changed one is an update', async () => {
  const d = liveDir();
  d.write('a.yaml', svc('moving'));
  const sub = d.start();
  try {
    assert.is(d.events.length, 1);
    let mark = d.events.length;
    // rename is atomic: the object leaves a.yaml and appears in b.yaml in one step.
    renameSync(join(d.dir, 'a.yaml'), join(d.dir, 'b.yaml'));
    let got = await d.settle(mark, 0);
    assert.equal(got, [], 'same content: nothing happened to the cluster');

    mark = d.events.length;
    d.write('c.yaml', svc('moving', 9090));
    unlinkSync(join(d.dir, 'b.yaml'));
    got = await d.settle(mark, 1);
    assert.equal(got.map((e) => `${e.type} ${e.key}`), ['update default/moving']);
  } finally {
    sub.unsubscribe();
    d.cleanup();
  }
});

live('same object in two files: the last file wins, with a warning', async () => {
  const d = liveDir();
  d.write('a.yaml', svc('dup', 1));
  d.write('b.yaml', svc('dup', 2));
  const sub = d.start();
  try {
    assert.equal(d.events.map((e) => port(e)), [2]);
    assert.ok(d.lines.some((l) => l.level === 40 && /several files/.test(String(l.msg))));
    const mark = d.events.length;
    unlinkSync(join(d.dir, 'b.yaml'));
    const got = await d.settle(mark, 1);
    assert.equal(got.map((e) => `${e.type} ${port(e)}`), ['update 1']);
  } finally {
    sub.unsubscribe();
    d.cleanup();
  }
});

live('a file that becomes malformed keeps its objects; fixing it applies the change', async () => {
  const d = liveDir();
  d.write('app.yaml', `${svc('one')}---\n${svc('two')}`);
  d.write('other.yaml', svc('other'));
  const sub = d.start();
  try {
    assert.is(d.events.length, 3);
    let mark = d.events.length;
    d.write('app.yaml', `${svc('one', 81)}---\nkind: Service\nmetadata:\n  name: two\nspec: [oops\n`);
    d.write('other.yaml', svc('other', 82));
    let got = await d.settle(mark, 2);
    assert.equal(got.map((e) => `${e.type} ${e.key}`), ['update default/one', 'update default/other'], 'no delete of two');
    assert.is(d.errors.length, 1);
    assert.match(d.errors[0]!.file, /app\.yaml$/);
    assert.ok(d.errors[0]!.line >= 11, `line ${d.errors[0]!.line}`);
    assert.ok(d.lines.some((l) => l.level === 40 && /app\.yaml:\d+/.test(String(l.msg))), 'warned');

    mark = d.events.length;
    d.write('app.yaml', svc('one', 81));
    got = await d.settle(mark, 1);
    assert.equal(got.map((e) => `${e.type} ${e.key}`), ['delete default/two']);
  } finally {
    sub.unsubscribe();
    d.cleanup();
  }
});

live('a burst of writes is one rescan', async () => {
  const d = liveDir();
  d.write('a.yaml', svc('a', 1));
  const sub = d.start(300);
  try {
    for (let p = 2; p <= 5; p++) d.write('a.yaml', svc('a', p));
    const got = await d.settle(1, 1);
    assert.equal(got.map((e) => `${e.type} ${port(e)}`), ['update 5']);
  } finally {
    sub.unsubscribe();
    d.cleanup();
  }
});

live('symlinked directories are followed once; loops do not hang the scan', async () => {
  const d = liveDir();
  mkdirSync(join(d.dir, 'real'));
  d.write('real/a.yaml', svc('a'));
  symlinkSync(join(d.dir, 'real'), join(d.dir, 'real', 'loop'));
  const sub = d.start();
  try {
    assert.equal(d.events.map((e) => e.key), ['default/a']);
  } finally {
    sub.unsubscribe();
    d.cleanup();
  }
});

live('the debounce runs on the injected scheduler', async () => {
  const d = liveDir();
  const scheduler = new VirtualTimeScheduler();
  // A minute of quiet time in virtual time: only flushing the scheduler lets the rescan run.
  const sub = manifestsSource({ dir: d.dir, logger: pino({ level: 'silent' }), debounceMs: 60_000, scheduler })
    .subscribe((e) => d.events.push(e));
  try {
    d.write('a.yaml', svc('a'));
    await waitFor(() => {
      scheduler.flush();
      return d.events.length === 1;
    }, { what: 'rescan after a virtual minute' });
    assert.ok(scheduler.frame >= 60_000);
  } finally {
    sub.unsubscribe();
    d.cleanup();
  }
});

/** A source whose quiet time is a virtual minute: only `at0()` (frame 0) or `all()` run its rescans. */
function virtualSource(d: ReturnType<typeof liveDir>) {
  const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
  const sub = manifestsSource({ dir: d.dir, logger: pino({ level: 'silent' }), debounceMs: 60_000, scheduler })
    .subscribe((e) => d.events.push(e));
  return {
    scheduler,
    sub,
    /** Waits until a notification has arrived (it schedules the quiet-time rescan). */
    notified: () => waitFor(() => scheduler.actions.length > 0, { what: 'a notification' }),
    at0: () => {
      scheduler.maxFrames = 0;
      scheduler.flush();
    },
    all: () => {
      scheduler.maxFrames = Infinity;
      scheduler.flush();
    },
  };
}

live('a file renamed into place is read at once, without the quiet time', async () => {
  const d = liveDir();
  const v = virtualSource(d);
  try {
    writeFileSync(join(d.dir, 'a.yaml.tmp'), svc('a'));
    renameSync(join(d.dir, 'a.yaml.tmp'), join(d.dir, 'a.yaml'));
    await waitFor(() => {
      v.at0();
      return d.events.length === 1;
    }, { what: 'the renamed file read at frame 0' });
    assert.is(v.scheduler.frame, 0, 'no quiet time passed');
    assert.equal(d.events.map((e) => `${e.type} ${e.key}`), ['add default/a']);
    assert.is(v.scheduler.actions.length, 0, 'no rescan left to run after it');
  } finally {
    v.sub.unsubscribe();
    d.cleanup();
  }
});

live('a file written in place is read only after the quiet time: a half-written state is never read', async () => {
  const d = liveDir();
  const whole = `${svc('a')}---\n${svc('b', 81)}`;
  d.write('a.yaml', `${svc('a')}---\n${svc('b')}`);
  const v = virtualSource(d);
  try {
    assert.equal(d.events.map((e) => `${e.type} ${e.key}`), ['add default/a', 'add default/b']);
    d.events.length = 0;
    // Truncate and write the first half (Service b missing), as an editor's in-place save does.
    writeFileSync(join(d.dir, 'a.yaml'), whole.slice(0, whole.indexOf('---')));
    await v.notified();
    v.at0();
    assert.equal(d.events, [], 'nothing read before the quiet time');
    writeFileSync(join(d.dir, 'a.yaml'), whole);
    await waitFor(() => {
      v.all();
      return d.events.length > 0;
    }, { what: 'the rescan after the quiet time' });
    assert.equal(d.events.map((e) => `${e.type} ${e.key}`), ['update default/b'], 'b changed, never removed');
    assert.ok(v.scheduler.frame >= 60_000);
  } finally {
    v.sub.unsubscribe();
    d.cleanup();
  }
});

live('a new file created and written in two steps is read only after the quiet time', async () => {
  const d = liveDir();
  const v = virtualSource(d);
  try {
    const text = `${svc('a')}---\n${svc('b')}`;
    const fd = openSync(join(d.dir, 'a.yaml'), 'w');
    writeSync(fd, text.slice(0, text.indexOf('---')));
    await v.notified();
    v.at0();
    assert.equal(d.events, [], 'the half-written new file is not read at once');
    writeSync(fd, text.slice(text.indexOf('---')));
    closeSync(fd);
    await waitFor(() => {
      v.all();
      return d.events.length >= 2;
    }, { what: 'the rescan after the quiet time' });
    assert.equal(d.events.map((e) => `${e.type} ${e.key}`), ['add default/a', 'add default/b']);
  } finally {
    v.sub.unsubscribe();
    d.cleanup();
  }
});

live('unsubscribe closes the watchers', async () => {
  const d = liveDir();
  mkdirSync(join(d.dir, 'sub'));
  // A closed watcher leaves the active handles one turn of the event loop later.
  const watchers = () => process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length;
  await waitFor(() => watchers() === 0, { what: 'earlier watchers closed' });
  const sub = d.start();
  try {
    assert.is(watchers(), 2, 'one watcher per directory');
  } finally {
    sub.unsubscribe();
    d.cleanup();
  }
  await waitFor(() => watchers() === 0, { what: 'watchers closed', timeoutMs: 2000 });
});

read.run();
parse.run();
live.run();
