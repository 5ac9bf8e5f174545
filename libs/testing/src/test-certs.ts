import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A private CA and a server certificate it signed for 127.0.0.1 and localhost (files, PEM). */
export interface TestCerts {
  ca: string;
  cert: string;
  key: string;
}

/** Makes them with `openssl` in a temporary directory (for a day). */
export function makeTestCerts(): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), 'sundial-certs-'));
  const file = (name: string) => join(dir, name);
  writeFileSync(file('san.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  const steps = [
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=sundial-test-ca'],
    ['-keyout', file('ca.key'), '-out', file('ca.pem')],
    ['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1'],
    ['-keyout', file('server.key'), '-out', file('server.csr')],
    ['x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key')],
    ['-CAcreateserial', '-days', '1', '-extfile', file('san.cnf'), '-out', file('server.pem')],
  ];
  for (let n = 0; n < steps.length; n += 2) {
    const made = spawnSync('openssl', [...steps[n], ...steps[n + 1]], { encoding: 'utf8' });
    if (made.status !== 0) throw new Error(`openssl ${steps[n][0]} failed: ${made.stderr}`);
  }
  return { ca: file('ca.pem'), cert: file('server.pem'), key: file('server.key') };
}
