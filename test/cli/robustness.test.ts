import type { Timer } from '@sundial/core';
import { ensureBuilt, waitFor } from '@sundial/testing/harness';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import {
  type AddressInfo,
  createServer as createTcpServer,
  type Server as TcpServer,
  type Socket,
} from 'node:net';
import { BIN, runCli } from './run-cli';

/**
 * The built `sundial` where the other end misbehaves or the command line is wrong, against real HTTP
 * stand-ins: a reader that closes the pipe early, a scheduler that never answers, an unusable
 * SUNDIAL_URL. Each ends at once with a clear line and its exit code, never a stack or a hang.
 */
describe('sundial CLI: pipes, silent schedulers and bad settings', () => {
  let lister: Server;
  let silent: TcpServer;
  const sockets: Socket[] = [];
  let listerUrl: string;
  let silentUrl: string;
  let requests = 0;

  /** One page of 2,000 timers: the text table is far larger than a pipe's buffer. */
  const page = {
    items: Array.from({ length: 2000 }, (_, n) => ({
      key: `pipe:${n}`,
      status: 'pending',
      kind: 'once',
      handler: 'record',
      dueAt: 1_800_000_000_000,
      runCount: 0,
      last: null,
    })) as unknown as Timer[],
    nextCursor: null,
  };

  beforeAll(async () => {
    await ensureBuilt();
    lister = createServer((_request, response) => {
      requests++;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(page));
    });
    // accepts the connection and never answers: a scheduler stuck on an unresponsive Redis
    silent = createTcpServer((socket) => sockets.push(socket));
    await Promise.all([
      new Promise<void>((ready) => lister.listen(0, '127.0.0.1', ready)),
      new Promise<void>((ready) => silent.listen(0, '127.0.0.1', ready)),
    ]);
    listerUrl = `http://127.0.0.1:${(lister.address() as AddressInfo).port}`;
    silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  }, 180_000); // deadline: a build when dist is missing

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await Promise.all([
      new Promise((closed) => lister.close(closed)),
      new Promise((closed) => silent.close(closed)),
    ]);
  });

  /** `sundial <args> | head -c 1`: the reader takes one chunk and closes the pipe. */
  const readFirstChunk = (args: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, ...args], {
        env: { ...process.env, SUNDIAL_URL: listerUrl },
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdout.once('data', () => child.stdout.destroy());
      child.on('close', (code) => resolve({ code, stderr }));
    });

  it('a reader that closes the pipe early (| head) ends the command quietly, text and --json alike', async () => {
    for (const args of [['list'], ['list', '--json']]) {
      // Crashed with "Unhandled 'error' event … write EPIPE" and its stack, exit 1.
      expect(await readFirstChunk(args)).toEqual({ code: 0, stderr: '' });
    }
  });

  it('list --all --json through a pipe: the first page reaches the reader before the second is answered', async () => {
    let stdout = '';
    let held = false;
    // The second page is answered once the first page's last timer was read from the pipe.
    const streamer = createServer((request, response) => {
      const second = new URL(request.url!, 'http://x').searchParams.get('cursor') === 'second';
      const items = second ? page.items.slice(1000) : page.items.slice(0, 1000);
      const answer = () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ items, nextCursor: second ? null : 'second' }));
      };
      if (!second) return answer();
      // deadline: a CLI that prints nothing before the last page never gets here
      waitFor(() => stdout.includes('"key": "pipe:999"'), { timeoutMs: 10_000, what: 'the first page' })
        .catch(() => (held = true))
        .finally(answer);
    });
    await new Promise<void>((ready) => streamer.listen(0, '127.0.0.1', ready));
    try {
      const url = `http://127.0.0.1:${(streamer.address() as AddressInfo).port}`;
      const child = spawn(process.execPath, [BIN, 'list', '--all', '--json'], {
        env: { ...process.env, SUNDIAL_URL: url },
      });
      child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect({ code, held }).toEqual({ code: 0, held: false });
      expect(JSON.parse(stdout)).toEqual({ items: page.items, nextCursor: null });
    } finally {
      await new Promise((closed) => streamer.close(closed));
    }
  });

  it('a scheduler that never answers: exit 3 after SUNDIAL_TIMEOUT_MS, a write told it may have been applied', async () => {
    const env = { SUNDIAL_URL: silentUrl, SUNDIAL_TIMEOUT_MS: '300' };
    const started = Date.now();
    // Hung until killed: fetch has no timeout of its own.
    const read = await runCli(['list'], env);
    expect(read).toMatchObject({ code: 3, stdout: '' });
    expect(read.stderr).toBe(
      `sundial: unavailable: the scheduler at ${silentUrl} did not answer within 300 ms\n` +
        "fix: See the scheduler's logs and its Redis (a scheduler waiting on an unresponsive Redis answers late), then retry; SUNDIAL_TIMEOUT_MS sets the wait.\n",
    );
    const write = await runCli(['cancel', '--prefix', 'inv:'], env);
    expect(write.code).toBe(3);
    expect(write.stderr).toMatch(
      /did not answer within 300 ms: the request was sent and may or may not have been applied\nfix: Check with sundial list, or run the same command again with the same --idempotency-key/,
    );
    expect(Date.now() - started).toBeLessThan(10_000); // deadline: two runs of 300 ms each and node's start
  });

  it('Ctrl-C ends the command at once (exit 130), a write told it may have been applied', async () => {
    const child = spawn(process.execPath, [BIN, 'pause', 'k', '--idempotency-key', 'op-1'], {
      env: { ...process.env, SUNDIAL_URL: silentUrl },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    const connected = sockets.length;
    await waitFor(() => sockets.length > connected, { what: 'the CLI to connect' });
    child.kill('SIGINT');
    // It died without a word: the operator could not tell whether the pause went through.
    expect(await closed).toBe(130);
    expect(stderr).toBe(
      'sundial: interrupted: the request may or may not have been applied\n' +
        'fix: With an --idempotency-key, run sundial pause k --idempotency-key op-1 again (a repeat changes nothing more); without one, check with sundial get or sundial list first.\n',
    );
  });

  it('an unusable SUNDIAL_URL or SUNDIAL_TIMEOUT_MS is a bad command line (exit 2) that sends nothing', async () => {
    requests = 0;
    for (const url of ['notaurl', 'ftp://x', 'localhost:3000']) {
      const run = await runCli(['list'], { SUNDIAL_URL: url });
      // "notaurl" was an internal error ("a bug in the sundial CLI"), "ftp://x" unreachable (exit 3).
      expect(run).toMatchObject({ code: 2, stdout: '' });
      expect(run.stderr).toBe(
        `sundial: invalid (field SUNDIAL_URL): SUNDIAL_URL "${url}" is not an http:// or https:// address\n` +
          "fix: Set SUNDIAL_URL to the scheduler's root, e.g. SUNDIAL_URL=http://127.0.0.1:3000.\n",
      );
    }
    const run = await runCli(['list', '--json'], { SUNDIAL_URL: listerUrl, SUNDIAL_TIMEOUT_MS: '5s' });
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stderr)).toEqual({
      error: expect.objectContaining({ reason: 'invalid', field: 'SUNDIAL_TIMEOUT_MS' }),
    });
    expect(requests).toBe(0);
  });

  it("an option left without its value is refused, not given the next option's name as its value", async () => {
    requests = 0;
    // `--prefix --json` listed the timers under the prefix "--json": none, said as JSON.
    const run = await runCli(['list', '--prefix', '--json'], { SUNDIAL_URL: listerUrl });
    expect(run).toMatchObject({ code: 2, stdout: '' });
    expect(JSON.parse(run.stderr)).toEqual({
      error: {
        reason: 'usage',
        message: '--prefix needs a value',
        fix: 'Write --prefix <value> (or --prefix=<value>).',
      },
    });
    // a mistyped flag last on the line is named unknown (it was "--shw-payload needs a value")
    expect((await runCli(['get', 'k', '--shw-payload'], { SUNDIAL_URL: listerUrl })).stderr).toMatch(
      /^sundial: usage: unknown option --shw-payload\n/,
    );
    expect(requests).toBe(0);
  });

  it('help: -h after a command shows its usage; help of an unknown command is a bad command line', async () => {
    requests = 0;
    // `get -h` asked the scheduler for the timer "-h".
    const usage = await runCli(['get', '-h'], { SUNDIAL_URL: listerUrl });
    expect(usage).toMatchObject({ code: 0, stderr: '' });
    expect(usage.stdout).toContain('usage: sundial get <key>');
    expect(requests).toBe(0);
    // `help frobnicate` printed the general help and exited 0.
    const unknown = await runCli(['help', 'frobnicate'], {});
    expect(unknown).toMatchObject({ code: 2, stdout: '' });
    expect(unknown.stderr).toMatch(/^sundial: usage: unknown command "frobnicate"\nfix: Run sundial help/);
  });
});
