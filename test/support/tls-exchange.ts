// A raw HTTP/1.1 GET over TLS with a given SNI name, trusting any certificate: for tests that
// must see who answers a TLS connection (the peer certificate) as well as what it answers.
import { connect } from 'node:tls';

/** The peer certificate's CN and the whole answer (status line, headers, body). */
export function tlsExchange(port: number, servername: string): Promise<{ cn: string; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false }, () => {
      const cn = String(socket.getPeerCertificate().subject?.CN ?? '');
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => { text += d; });
      socket.on('end', () => resolve({ cn, text }));
      socket.write(`GET / HTTP/1.1\r\nHost: ${servername}\r\nConnection: close\r\n\r\n`);
    });
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy(new Error(`${servername}: timed out`)));
  });
}
