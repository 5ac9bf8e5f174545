import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, connect, createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { connect as tlsConnect } from 'node:tls';
import { runInThisContext } from 'node:vm';
import Redis from 'ioredis';
import type { RedisServer } from './redis-server';
import { startRedis } from './redis-server';
import { makeTestCerts } from './test-certs';
import { waitFor } from './wait-for';

describe('startRedis', () => {
  let server: RedisServer;
  let client: Redis;

  beforeAll(async () => {
    server = await startRedis();
    client = new Redis(server.url);
  });

  afterAll(async () => {
    await client?.quit();
    await server?.stop();
  });

  it('starts a private server on a free port, never the shared 6379', async () => {
    expect(server.port).not.toBe(6379);
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
    expect(await client.ping()).toBe('PONG');
    expect(await client.config('GET', 'port')).toEqual(['port', String(server.port)]);
  });

  it('serves reads and writes with noeviction and its own dir', async () => {
    await client.set('greeting', 'hello');
    expect(await client.get('greeting')).toBe('hello');
    expect(await client.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
    expect(await client.config('GET', 'dir')).toEqual(['dir', expect.stringContaining('sundial-redis-')]);
  });

  it('stops the server and removes its dir', async () => {
    const other = await startRedis({ args: ['--hz', '10'] });
    const probe = new Redis(other.url);
    expect(await probe.config('GET', 'hz')).toEqual(['hz', '10']);
    await probe.quit();
    await other.stop();
    expect(existsSync(other.dir)).toBe(false);
    await expect(connectRaw(other.port)).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('startRedis with tlsArgs', () => {
  it('picks the TLS port again when the one it tried is taken: a port picked ahead can be', async () => {
    const certs = makeTestCerts();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const takenPort = (taken.address() as AddressInfo).port;
    const tried: number[] = [];
    const server = await startRedis({
      // the first attempt is handed a port someone else holds, as a port picked ahead of the start can be
      tlsArgs: (tlsPort) => {
        tried.push(tlsPort);
        const port = tried.length === 1 ? takenPort : tlsPort;
        return [
          ...['--tls-port', String(port), '--tls-cert-file', certs.cert, '--tls-key-file', certs.key],
          ...['--tls-ca-cert-file', certs.ca, '--tls-auth-clients', 'no'],
        ];
      },
    });
    try {
      expect(tried).toHaveLength(2);
      expect(server.tlsPort).toBe(tried[1]);
      expect(await tlsPing(server.tlsPort!, certs.ca)).toBe('+PONG');
    } finally {
      await server.stop();
      taken.close();
      rmSync(dirname(certs.ca), { recursive: true, force: true });
    }
  });
});

describe('a server never outlives the process that started it', () => {
  const hostProcess = runInThisContext('process') as NodeJS.Process;
  const deathSignal = spawnSync('setpriv', ['--pdeathsig', 'KILL', 'true']).status === 0;

  it('listens on the real process (not jest’s copy) only while a server runs', async () => {
    const before = hostProcess.listenerCount('exit');
    const server = await startRedis();
    const whileRunning = hostProcess.listenerCount('exit');
    await server.stop();
    expect(whileRunning).toBe(before + 1);
    expect(hostProcess.listenerCount('exit')).toBe(before);
  });

  it('exit without stop(): the server is killed and its dir removed', async () => {
    const { server, exited } = await serverOfChild('process.exit(0)');
    expect(await exited).toEqual({ code: 0, signal: null });
    await expectGone(server.port);
    expect(existsSync(server.dir)).toBe(false);
  });

  it('SIGTERM: the server is killed, its dir removed, and the process still dies of the signal', async () => {
    const { server, exited, child } = await serverOfChild('setInterval(() => undefined, 1000)');
    child.kill('SIGTERM');
    expect(await exited).toEqual({ code: null, signal: 'SIGTERM' });
    await expectGone(server.port);
    expect(existsSync(server.dir)).toBe(false);
  });

  (deathSignal ? it : it.skip)(
    'SIGKILL (no listener runs): the kernel kills the server with it',
    async () => {
      const { server, exited, child } = await serverOfChild('setInterval(() => undefined, 1000)');
      child.kill('SIGKILL');
      expect(await exited).toEqual({ code: null, signal: 'SIGKILL' });
      await expectGone(server.port);
      rmSync(server.dir, { recursive: true, force: true });
    },
  );
});

/**
 * A plain node process (no jest) that starts a server with this harness, reports it on stdout, then
 * runs `then`. It loads the TypeScript harness through typescript's transpiler, as ts-jest does.
 */
async function serverOfChild(then: string) {
  const program = `
    const ts = require('typescript');
    const { readFileSync } = require('node:fs');
    require.extensions['.ts'] = (module, file) => module._compile(ts.transpileModule(readFileSync(file, 'utf8'),
      { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText, file);
    require(${JSON.stringify(join(__dirname, 'redis-server.ts'))}).startRedis().then((server) => {
      console.log(JSON.stringify(server));
      ${then};
    });`;
  const child = spawn(process.execPath, ['-e', program], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const lines = createInterface({ input: child.stdout });
  const [line] = (await Promise.race([
    once(lines, 'line'),
    exited.then((how) =>
      Promise.reject(new Error(`the child ended before its server ran: ${JSON.stringify(how)}`)),
    ),
  ])) as [string];
  lines.close();
  const server = JSON.parse(line) as Pick<RedisServer, 'port' | 'dir'>;
  return { child, exited, server };
}

/** Waits for a child's server to be gone; if it is not, stops it (so a failing run leaves no orphan either). */
async function expectGone(port: number): Promise<void> {
  try {
    await waitFor(() => connectRaw(port).then(() => false, isRefused), {
      timeoutMs: 5_000, // a deadline, left as soon as it holds
      what: `the server on port ${port} to go`,
    });
  } catch (error) {
    await connectRaw(port, 'SHUTDOWN NOSAVE\r\n').catch(() => undefined);
    throw error;
  }
}

function isRefused(error: NodeJS.ErrnoException): boolean {
  return error.code === 'ECONNREFUSED';
}

/** Connects, writes `command` if any, and hangs up. */
function connectRaw(port: number, command = ''): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.end(command);
      resolve();
    });
    socket.once('error', reject);
  });
}

/** PING over TLS to 127.0.0.1:`port`, trusting `ca`: the first reply line. */
function tlsPing(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect(
      { port, host: '127.0.0.1', ca: readFileSync(ca), servername: 'localhost' },
      () => socket.write('PING\r\n'),
    );
    socket.once('data', (chunk: Buffer) => {
      resolve(chunk.toString().split('\r\n')[0]);
      socket.end();
    });
    socket.once('error', reject);
  });
}
