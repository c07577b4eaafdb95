// Debian's headless Chromium (`apt-get install chromium`, scripts/setup.sh), driven through
// playwright-core over CDP. Every name resolves to 127.0.0.1 inside the browser
// (--host-resolver-rules), never through the machine's resolver, and the test certificate is
// trusted by its public key (--ignore-certificate-errors-spki-list), so the browser treats the
// test hosts' TLS as valid: HSTS is kept, cookies marked Secure are stored.
import { X509Certificate, createHash } from 'node:crypto';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** base64(SHA-256(SubjectPublicKeyInfo)) of a PEM certificate: the form Chromium's SPKI list takes. */
export function spkiHash(certPem: string): string {
  const spki = new X509Certificate(certPem).publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}

/** A headless Chromium that trusts `certPem` and reaches every host name at 127.0.0.1 (the port stays the URL's). */
export function launchBrowser(certPem: string): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--host-resolver-rules=MAP * 127.0.0.1',
      `--ignore-certificate-errors-spki-list=${spkiHash(certPem)}`,
      '--no-proxy-server',
      '--disable-background-networking',
      '--disable-component-update',
    ],
  });
}

/** The protocol the page's document came over, as the browser reports it (`h2`, `http/1.1`): the first performance entry is the navigation. */
export function navigationProtocol(page: Page): Promise<string> {
  return page.evaluate(() => (performance.getEntries()[0] as unknown as { nextHopProtocol: string }).nextHopProtocol);
}
